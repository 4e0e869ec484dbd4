/**
 * `npm run admin -- staff grant|revoke|assign|unassign|list ...`, `ops grant|revoke|list` and
 * `suppliers grant|revoke|list`: server-owned staff and ops rows, and workspaces' supplier access.
 * None is ever decided by a token; this is the one way to change them.
 * A staff change is announced on Redis after it commits, so running APIs drop what they cached; if
 * Redis cannot be reached the change stays saved, the command exits 3 and says so, and the APIs see
 * it within STAFF_CACHE_MAX_AGE_MS at most (running the command again retries the announcement).
 */
import { parseArgs } from 'node:util';
import { createLogger } from '../shared/logger';
import { createDb, dbOptionsOf } from '../shared/db/knex';
import { DEFAULT_REDIS_URL, resolveDatabase } from '../shared/runtime/infrastructure';
import { createApiRedis, redisTarget, type RedisTarget } from '../shared/redis';
import { STAFF_CACHE_MAX_AGE_MS, staffWriter, type StaffWriter } from '../shared/staff/staff-version';
import { assignClient, grantStaff, revokeStaff, unassignClient } from '../shared/staff/staff-store';
import { grantOps, listOps, revokeOps } from '../shared/staff/ops-store';
import {
  grantSupplierAccess,
  listSupplierAccess,
  parseSupplierGrant,
  parseSupplierRef,
  revokeSupplierAccess,
} from '../shared/adapters/supplier-access';
import { configOrExit, prepareDatabase } from './boot';
import type { Knex } from 'knex';

const USAGE = `usage:
  npm run admin -- staff grant    --user USER [--name "Display Name"]
  npm run admin -- staff revoke   --user USER
  npm run admin -- staff assign   --user USER --org ADVERTISER_ID
  npm run admin -- staff unassign --user USER --org ADVERTISER_ID
  npm run admin -- staff list
  npm run admin -- ops grant  USER
  npm run admin -- ops revoke USER
  npm run admin -- ops list
  npm run admin -- suppliers grant  --org WORKSPACE --adapter ADAPTER_KEY [--account ACCOUNT_JSON] [--secret-ref REF]
  npm run admin -- suppliers revoke --org WORKSPACE --adapter ADAPTER_KEY
  npm run admin -- suppliers list   [--org WORKSPACE]
    ACCOUNT_JSON, for an AdCP seller: '{"brand":{"domain":"acme.example"},"operator":"agency.example"}'`;

class AnnouncementFailed extends Error {}

/** Staff changes on the database, announced to the APIs sharing REDIS_URL and REDIS_PREFIX; a few quick retries, then give up loudly. */
function announcingWriter(db: Knex, target: RedisTarget, prefix: string): { writer: StaffWriter; close(): void } {
  const redis = createApiRedis(target, {
    enableOfflineQueue: true,
    lazyConnect: true,
    connectTimeout: 2000,
    commandTimeout: 2000,
    maxRetriesPerRequest: 2,
    retryStrategy: (attempt) => (attempt > 3 ? null : attempt * 200),
  });
  redis.on('error', () => undefined); // reported once, below, as the command's outcome
  const plain = staffWriter(db, redis, prefix);
  const writer: StaffWriter = {
    db,
    async announce() {
      try {
        await plain.announce();
      } catch (err) {
        throw new AnnouncementFailed(
          `the change is saved, but running APIs could not be told (Redis: ${err instanceof Error ? err.message : String(err)}); ` +
            `they see it within ${STAFF_CACHE_MAX_AGE_MS / 1000} s. Run the same command again to retry the announcement.`,
        );
      }
    },
  };
  return { writer, close: () => redis.disconnect() };
}

/** Ops: who may inspect the queues (every tenant's job ids) on /admin/queues. */
async function ops(db: Knex, action: string, user: string | undefined): Promise<void> {
  if (action === 'list') {
    const rows = await listOps(db);
    for (const r of rows) process.stdout.write(`${r.userId}\t${r.active ? 'active' : 'revoked'}\n`);
    if (!rows.length) process.stdout.write('no ops\n');
    return;
  }
  if (!user) throw new Error(`a user id is required\n${USAGE}`);
  if (action === 'grant') process.stdout.write(`ops ${user}: ${await grantOps(db, user)}\n`);
  else if (action === 'revoke') process.stdout.write(`ops ${user}: ${await revokeOps(db, user)}\n`);
  else throw new Error(USAGE);
}

type SupplierCommand =
  | { action: 'grant'; grant: ReturnType<typeof parseSupplierGrant> }
  | { action: 'revoke'; org: string; adapterKey: string }
  | { action: 'list'; org?: string };

/** A suppliers command, checked before anything is opened: bad input changes nothing. */
function supplierCommand(action: string, values: Record<string, string | undefined>): SupplierCommand {
  if (action === 'grant') {
    return {
      action,
      grant: parseSupplierGrant({ org: values.org, adapter: values.adapter, account: values.account, secretRef: values['secret-ref'] }),
    };
  }
  if (action === 'list') return { action, org: values.org };
  if (action !== 'revoke') throw new Error(USAGE);
  const { advertiserId, adapter } = parseSupplierRef({ org: values.org, adapter: values.adapter });
  return { action, org: advertiserId, adapterKey: adapter.key };
}

/** Supplier access: which workspace may buy through which supplier, and as which account there. */
async function suppliers(db: Knex, command: SupplierCommand): Promise<void> {
  if (command.action === 'list') {
    const rows = await listSupplierAccess(db, command.org);
    for (const r of rows) {
      const account = r.account === null ? '-' : JSON.stringify(r.account);
      process.stdout.write(
        `${r.advertiserId ?? '(every workspace)'}\t${r.adapterKey}\t${r.status}\t${r.approvedAt ?? 'not approved'}\t${account}\t${r.secretRef}\n`,
      );
    }
    if (!rows.length) process.stdout.write('no supplier access\n');
    return;
  }
  if (command.action === 'revoke') {
    const outcome = await revokeSupplierAccess(db, command.org, command.adapterKey);
    process.stdout.write(`supplier access ${command.adapterKey} for ${command.org}: ${outcome}\n`);
    return;
  }
  const { grant } = command;
  const outcome = await grantSupplierAccess(db, grant);
  const account = grant.account ? `account ${JSON.stringify(grant.account)}, ` : '';
  process.stdout.write(
    `supplier access ${grant.adapterKey} for ${grant.advertiserId}: ${outcome} (${account}credential ${grant.secretRef}, approved)\n`,
  );
}

async function main() {
  const { positionals, values } = parseArgs({
    allowPositionals: true,
    options: {
      user: { type: 'string' },
      org: { type: 'string' },
      name: { type: 'string' },
      adapter: { type: 'string' },
      account: { type: 'string' },
      'secret-ref': { type: 'string' },
    },
  });
  const [area, action, userArg] = positionals;
  if ((area !== 'staff' && area !== 'ops' && area !== 'suppliers') || !action) throw new Error(USAGE);
  if (area === 'ops' && !['grant', 'revoke', 'list'].includes(action)) throw new Error(USAGE);
  const supplier = area === 'suppliers' ? supplierCommand(action, values) : undefined;
  const need = (v: string | undefined, flag: string) => {
    if (!v) throw new Error(`${flag} is required\n${USAGE}`);
    return v;
  };

  const config = configOrExit();
  const logger = createLogger('warn');
  const database = await resolveDatabase(config, logger);
  const db = createDb(database.url, dbOptionsOf(config), logger);
  let announcer: ReturnType<typeof announcingWriter> | undefined;
  try {
    await prepareDatabase(db, config);
    if (area === 'ops') return await ops(db, action, values.user ?? userArg);
    if (supplier) return await suppliers(db, supplier);
    const user = action === 'list' ? '' : need(values.user, '--user');
    // Connects to Redis only when a change is announced: listing needs none.
    announcer = announcingWriter(db, redisTarget(config.REDIS_URL ?? DEFAULT_REDIS_URL, config.REDIS_CLUSTER_NODES), config.REDIS_PREFIX);
    const staff = announcer.writer;
    switch (action) {
      case 'grant':
        process.stdout.write(`staff ${user}: ${await grantStaff(staff, user, values.name)}\n`);
        break;
      case 'revoke':
        process.stdout.write(`staff ${user}: ${await revokeStaff(staff, user)}\n`);
        break;
      case 'assign': {
        const org = need(values.org, '--org');
        process.stdout.write(`staff ${user} → client ${org}: ${await assignClient(staff, user, org)}\n`);
        break;
      }
      case 'unassign': {
        const org = need(values.org, '--org');
        process.stdout.write(`staff ${user} → client ${org}: ${await unassignClient(staff, user, org)}\n`);
        break;
      }
      case 'list': {
        const rows = await db('staff_members as m')
          .leftJoin('staff_assignments as a', 'a.staff_user_id', 'm.user_id')
          .select('m.user_id', 'm.active', db.raw("coalesce(string_agg(a.advertiser_id, ',' order by a.advertiser_id), '') as clients"))
          .groupBy('m.user_id', 'm.active')
          .orderBy('m.user_id');
        for (const r of rows) process.stdout.write(`${r.user_id}\t${r.active ? 'active' : 'revoked'}\t${r.clients}\n`);
        if (!rows.length) process.stdout.write('no staff\n');
        break;
      }
      default:
        throw new Error(USAGE);
    }
  } finally {
    announcer?.close();
    await db.destroy();
    await database.embedded?.stop();
  }
}

main().catch((err) => {
  process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(err instanceof AnnouncementFailed ? 3 : 2);
});
