import type { SupplierAdapter } from '../../shared/adapters/adapter';
import { ADAPTERS, type AdapterDescriptor } from '../../shared/adapters/catalogue';
import { liveAdapter } from './live';
import { nativeStagedAdapter } from './native-staged';
import { sandboxAdapter } from './sandbox';
import { workflowAdapter } from './workflow';
import { liveReviewer, sandboxReviewer } from './sandbox-review';

function implementationOf(d: AdapterDescriptor): SupplierAdapter {
  switch (d.kind) {
    case 'sandbox':
      return { ...sandboxAdapter(d), reviewer: sandboxReviewer(d.key) };
    case 'workflow':
      return workflowAdapter(d);
    case 'native-staged':
      return { ...nativeStagedAdapter(d), reviewer: sandboxReviewer(d.key) };
    case 'live':
      return { ...liveAdapter(d), reviewer: liveReviewer };
  }
}

/** Every catalogued adapter with its worker implementation. */
export const ADAPTER_IMPLEMENTATIONS: ReadonlyMap<string, SupplierAdapter> = new Map(ADAPTERS.map((d) => [d.key, implementationOf(d)]));
