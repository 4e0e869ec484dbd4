/**
 * `npm run token -- --org ORG --user USER [--perm P]... [--product P] [--channel C]... [--agent CLIENT] [--ttl SECONDS]`
 * prints an access token from the development issuer.
 */
import { parseArgs } from 'node:util';
import { z } from 'zod';
import { loadDevIssuer, DEV_ISSUER } from '../shared/auth/dev-issuer';
import { ChannelSchema, ProductSchema } from '../shared/auth/products';
import { configOrExit } from './boot';

const Args = z.object({
  org: z.string().min(1).max(200),
  user: z.string().min(1).max(200),
  perm: z.array(z.string().min(1)).default([]),
  product: ProductSchema.default('flightdeck'),
  channel: z.array(ChannelSchema).optional(),
  agent: z.string().min(1).optional(),
  ttl: z.coerce
    .number()
    .int()
    .min(60)
    .max(7 * 24 * 3600)
    .default(3600),
});

async function main() {
  const config = configOrExit();
  if (config.AUTH_JWKS_URL || config.NODE_ENV === 'production') {
    throw new Error('npm run token issues development tokens only; this deployment uses AUTH_JWKS_URL.');
  }
  const { values } = parseArgs({
    options: {
      org: { type: 'string' },
      user: { type: 'string' },
      perm: { type: 'string', multiple: true },
      product: { type: 'string' },
      channel: { type: 'string', multiple: true },
      agent: { type: 'string' },
      ttl: { type: 'string' },
    },
  });
  const parsed = Args.safeParse(values);
  if (!parsed.success) {
    throw new Error(
      `${parsed.error.issues.map((i) => `--${i.path.join('.')}: ${i.message}`).join('\n')}\n` +
        'usage: npm run token -- --org ORG --user USER [--perm agent:approve] [--product flightdeck|flightdeck-dooh|flightdeck-ctv] [--channel ctv] [--agent CLIENT_ID] [--ttl 3600]',
    );
  }
  const a = parsed.data;
  const issuer = await loadDevIssuer(config.DATA_DIR, config.AUTH_AUDIENCE, config.AUTH_ISSUER ?? DEV_ISSUER);
  const token = await issuer.sign({
    org: a.org,
    user: a.user,
    permissions: a.perm,
    product: a.product,
    ttlSeconds: a.ttl,
    ...(a.channel ? { channels: a.channel } : {}),
    ...(a.agent ? { agent: a.agent } : {}),
  });
  process.stdout.write(`${token}\n`);
}

main().catch((err) => {
  process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(2);
});
