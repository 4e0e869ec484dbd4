import { randomBytes } from 'node:crypto';
import type { Knex } from 'knex';

export interface Workspace {
  id: string;
  name: string;
  pixelKey: string;
  createdAt: string;
}

interface WorkspaceRow {
  id: string;
  name: string;
  pixel_key: string;
  created_at: Date;
}

const toWorkspace = (r: WorkspaceRow): Workspace => ({
  id: r.id,
  name: r.name,
  pixelKey: r.pixel_key,
  createdAt: r.created_at.toISOString(),
});

const newPixelKey = () => `px_${randomBytes(16).toString('hex')}`;

/** A first verified request for a new org provisions its workspace; concurrent first requests agree on one row. */
export async function ensureWorkspace(db: Knex, advertiserId: string): Promise<Workspace> {
  const inserted = await db<WorkspaceRow>('workspaces')
    .insert({ id: advertiserId, name: advertiserId, pixel_key: newPixelKey() })
    .onConflict('id')
    .ignore()
    .returning('*');
  if (inserted[0]) return toWorkspace(inserted[0]);
  const row = await db<WorkspaceRow>('workspaces').where({ id: advertiserId }).first();
  if (!row) throw new Error(`workspace ${advertiserId} vanished after provisioning`);
  return toWorkspace(row);
}

export async function findWorkspaceByPixelKey(db: Knex, pixelKey: string): Promise<Workspace | null> {
  const row = await db<WorkspaceRow>('workspaces').where({ pixel_key: pixelKey }).first();
  return row ? toWorkspace(row) : null;
}

function remember(entries: Map<string, Workspace>, key: string, ws: Workspace, max: number): void {
  if (entries.size >= max) entries.delete(entries.keys().next().value as string);
  entries.set(key, ws);
}

/**
 * Remembers provisioned workspaces so that only the first request of an org pays for the
 * insert, and which workspace a pixel key belongs to. Both are safe to keep in each process
 * without invalidation: workspaces are never deleted and a pixel key never changes. Unknown
 * pixel keys are not remembered. Bounded: an evicted entry costs one more query.
 */
export class WorkspaceCache {
  private readonly entries = new Map<string, Workspace>();
  private readonly byPixelKey = new Map<string, Workspace>();
  constructor(
    private readonly db: Knex,
    private readonly max = 10_000,
  ) {}

  async get(advertiserId: string): Promise<Workspace> {
    const hit = this.entries.get(advertiserId);
    if (hit) return hit;
    const ws = await ensureWorkspace(this.db, advertiserId);
    remember(this.entries, advertiserId, ws, this.max);
    return ws;
  }

  async findByPixelKey(pixelKey: string): Promise<Workspace | null> {
    const hit = this.byPixelKey.get(pixelKey);
    if (hit) return hit;
    const ws = await findWorkspaceByPixelKey(this.db, pixelKey);
    if (ws) remember(this.byPixelKey, pixelKey, ws, this.max);
    return ws;
  }
}
