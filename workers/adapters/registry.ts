import type { SupplierAdapter } from '../../shared/adapters/adapter';
import { ADAPTERS, type AdapterDescriptor } from '../../shared/adapters/catalogue';
import type { AdcpSellerConnection } from '../../shared/adapters/adcp/connection';
import { webhookPath } from '../../shared/adapters/adcp/webhooks';
import { issuedWebhookSecret, pushNotificationConfig } from '../../shared/adapters/adcp/webhook-auth';
import { webhookAuthOf } from '../../shared/config/adcp-sellers';
import type { SecretBox } from '../../shared/crypto/secret-box';
import { adcpAdapter } from './adcp';
import { liveAdapter } from './live';
import { nativeStagedAdapter } from './native-staged';
import { sandboxAdapter } from './sandbox';
import { sandboxReporter } from './sandbox-delivery';
import { workflowAdapter } from './workflow';
import { liveReviewer, sandboxReviewer } from './sandbox-review';

/** What the adapters need of the deployment: the connections to its AdCP sellers. */
export interface AdapterDeps {
  adcp: ReadonlyMap<string, AdcpSellerConnection>;
  /** This service's public address (PUBLIC_BASE_URL): where sellers that sign webhooks push outcomes and fetch creative assets. */
  publicBaseUrl?: string | null;
  /** Opens the secrets issued to sellers that authenticate their webhooks the legacy way. */
  secrets?: SecretBox;
}

function implementationOf(d: AdapterDescriptor, deps: AdapterDeps): SupplierAdapter {
  switch (d.kind) {
    case 'sandbox':
      return { ...sandboxAdapter(d), reviewer: sandboxReviewer(d.key), reporter: sandboxReporter(d) };
    case 'workflow':
      return workflowAdapter(d);
    case 'native-staged':
      return { ...nativeStagedAdapter(d), reviewer: sandboxReviewer(d.key), reporter: sandboxReporter(d) };
    case 'live':
      return { ...liveAdapter(d), reviewer: liveReviewer };
    case 'adcp': {
      const connection = deps.adcp.get(d.key);
      // A seller catalogued at start but missing from this process's configuration refuses, sending nothing.
      if (!connection) return { ...liveAdapter(d), reviewer: liveReviewer };
      // Pushed outcomes only from a seller whose webhooks can be authenticated; the others are polled.
      const scheme = webhookAuthOf(connection.seller);
      const { secrets } = deps;
      const url = scheme && deps.publicBaseUrl && (scheme === 'rfc9421' || secrets) ? `${deps.publicBaseUrl}${webhookPath(d.key)}` : null;
      return adcpAdapter(d, connection, {
        publicBaseUrl: deps.publicBaseUrl ?? null,
        ...(url
          ? {
              pushNotification: async (ctx) =>
                pushNotificationConfig(
                  url,
                  scheme === 'rfc9421' ? null : { scheme: scheme!, secret: await issuedWebhookSecret(ctx.db, secrets!, d.key, scheme!) },
                ),
            }
          : {}),
      });
    }
  }
}

/** Every catalogued adapter with its worker implementation. */
export function adapterImplementations(deps: AdapterDeps): ReadonlyMap<string, SupplierAdapter> {
  return new Map(ADAPTERS.map((d) => [d.key, implementationOf(d, deps)]));
}

/** The adapters of a deployment with no AdCP seller connections (sandbox, workflow and live refusals). */
export const ADAPTER_IMPLEMENTATIONS: ReadonlyMap<string, SupplierAdapter> = adapterImplementations({ adcp: new Map() });
