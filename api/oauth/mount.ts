import express, { type Express, type NextFunction, type Request, type Response } from 'express';
import { errors, type Provider } from 'oidc-provider';
import { ChannelSchema } from '../../shared/auth/products';
import { entitledChannels } from '../../shared/auth/products';
import type { Logger } from '../../shared/logger';
import { DevAccountSchema, accountIdOf, accountOf } from './account';
import { consentPage, errorPage, loginPage, type GrantAllows } from './pages';

const OWN_PATHS = /^\/oauth\/(?!interaction\/)/;

/** oidc-provider's own errors (a missing interaction cookie, say) are shown as its status, not as a 500. */
function interactionError(logger: Logger) {
  return (err: unknown, res: Response, next: NextFunction) => {
    if (err instanceof errors.OIDCProviderError) {
      res.status(err.statusCode).type('html').send(errorPage(err.error, err.error_description));
      return;
    }
    logger.warn({ err: { message: err instanceof Error ? err.message : String(err) } }, 'authorization interaction failed');
    next(err);
  };
}

type Interaction = Awaited<ReturnType<Provider['interactionDetails']>>;

/** Grants what the interaction asks for (scopes, claims, resource scopes) and saves the grant. */
async function grantConsent(provider: Provider, details: Interaction): Promise<string> {
  const { prompt, params, session } = details;
  const grant = details.grantId
    ? ((await provider.Grant.find(details.grantId)) ??
      new provider.Grant({ accountId: session!.accountId, clientId: String(params.client_id) }))
    : new provider.Grant({ accountId: session!.accountId, clientId: String(params.client_id) });
  const missing = prompt.details as {
    missingOIDCScope?: string[];
    missingOIDCClaims?: string[];
    missingResourceScopes?: Record<string, string[]>;
  };
  if (missing.missingOIDCScope) grant.addOIDCScope(missing.missingOIDCScope.join(' '));
  if (missing.missingOIDCClaims) grant.addOIDCClaims(missing.missingOIDCClaims);
  for (const [indicator, scopes] of Object.entries(missing.missingResourceScopes ?? {}))
    grant.addResourceScope(indicator, scopes.join(' '));
  return grant.save();
}

const noStore = (res: Response) => res.setHeader('cache-control', 'no-store');

/**
 * Mounts the embedded development authorization server: its endpoints under /oauth, its
 * discovery at /.well-known/oauth-authorization-server and /.well-known/openid-configuration,
 * and the development login and workspace-bound consent pages.
 */
export function mountDevAuthorizationServer(
  app: Express,
  provider: Provider,
  o: { scope: string; logger: Logger; firstPartyClientId?: string; grantAllows: GrantAllows },
): void {
  const form = express.urlencoded({ extended: false, limit: '4kb' });
  const fail = interactionError(o.logger);

  app.get('/oauth/interaction/:uid', async (req: Request, res: Response, next: NextFunction) => {
    try {
      const details = await provider.interactionDetails(req, res);
      noStore(res);
      const clientId = String(details.params.client_id);
      if (details.prompt.name === 'login') {
        res.type('html').send(loginPage(details.uid, clientId));
        return;
      }
      const account = details.session?.accountId ? accountOf(details.session.accountId) : null;
      if (details.prompt.name !== 'consent' || !account) throw new errors.InvalidRequest('unexpected interaction');
      // Our own console asks for no consent: signing in to it is the user's whole intent.
      if (clientId === o.firstPartyClientId) {
        await provider.interactionFinished(
          req,
          res,
          { consent: { grantId: await grantConsent(provider, details) } },
          { mergeWithLastSubmission: true },
        );
        return;
      }
      const client = await provider.Client.find(clientId);
      // A client identified by its metadata document's URL named itself: the host says who serves it.
      const fromDocument = (client as { clientIdMetadataDocument?: boolean } | undefined)?.clientIdMetadataDocument === true;
      res.type('html').send(
        consentPage(details.uid, {
          clientId,
          clientName: client?.clientName ?? clientId,
          ...(fromDocument ? { clientHost: new URL(clientId).host } : {}),
          allows: o.grantAllows,
          user: account.user,
          workspace: account.workspace,
          product: account.product,
          channels: entitledChannels(account.product, account.channels),
          scope: o.scope,
        }),
      );
    } catch (err) {
      fail(err, res, next);
    }
  });

  app.post('/oauth/interaction/:uid/login', form, async (req: Request, res: Response, next: NextFunction) => {
    try {
      const details = await provider.interactionDetails(req, res);
      if (details.prompt.name !== 'login') throw new errors.InvalidRequest('this interaction is not a sign-in');
      const raw = (req.body ?? {}) as Record<string, string>;
      const list = (v: string | undefined) =>
        (v ?? '')
          .split(',')
          .map((c) => c.trim())
          .filter(Boolean);
      const channels = list(raw.channels);
      const permissions = list(raw.permissions);
      const account = DevAccountSchema.safeParse({
        user: raw.user,
        workspace: raw.workspace,
        product: raw.product,
        ...(channels.length ? { channels } : {}),
        ...(permissions.length ? { permissions } : {}),
      });
      const badChannel = channels.find((c) => !ChannelSchema.safeParse(c).success);
      if (!account.success || badChannel) {
        noStore(res);
        const detail = badChannel
          ? `Unknown channel ${badChannel}.`
          : account.error!.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
        res
          .status(400)
          .type('html')
          .send(loginPage(details.uid, String(details.params.client_id), detail));
        return;
      }
      await provider.interactionFinished(req, res, { login: { accountId: accountIdOf(account.data) } }, { mergeWithLastSubmission: false });
    } catch (err) {
      fail(err, res, next);
    }
  });

  app.post('/oauth/interaction/:uid/confirm', form, async (req: Request, res: Response, next: NextFunction) => {
    try {
      const details = await provider.interactionDetails(req, res);
      const { prompt, session } = details;
      if (prompt.name !== 'consent' || !session) throw new errors.InvalidRequest('this interaction is not a consent');
      const grantId = await grantConsent(provider, details);
      await provider.interactionFinished(req, res, { consent: { grantId } }, { mergeWithLastSubmission: true });
    } catch (err) {
      fail(err, res, next);
    }
  });

  app.post('/oauth/interaction/:uid/abort', form, async (req: Request, res: Response, next: NextFunction) => {
    try {
      await provider.interactionFinished(
        req,
        res,
        { error: 'access_denied', error_description: 'The user did not allow the connection.' },
        { mergeWithLastSubmission: false },
      );
    } catch (err) {
      fail(err, res, next);
    }
  });

  // Everything else under /oauth, and discovery, is oidc-provider's own.
  const callback = provider.callback();
  app.use((req: Request, res: Response, next: NextFunction) => {
    const path = req.url.split('?')[0]!;
    if (path === '/.well-known/oauth-authorization-server') {
      // RFC 8414 and OIDC discovery are the same document here.
      req.url = req.url.replace('/.well-known/oauth-authorization-server', '/.well-known/openid-configuration');
      req.originalUrl = req.url;
    } else if (path !== '/.well-known/openid-configuration' && !OWN_PATHS.test(path)) {
      next();
      return;
    }
    res.locals.route = 'oauth';
    callback(req, res);
  });
}
