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

/**
 * Remembers provisioned workspaces so that only the first request of an org pays for the
 * insert. Bounded: an evicted entry costs one more idempotent insert.
 */
export class WorkspaceCache {
  private readonly entries = new Map<string, Workspace>();
  constructor(
    private readonly db: Knex,
    private readonly max = 10_000,
  ) {}

  async get(advertiserId: string): Promise<Workspace> {
    const hit = this.entries.get(advertiserId);
    if (hit) return hit;
    const ws = await ensureWorkspace(this.db, advertiserId);
    if (this.entries.size >= this.max) this.entries.delete(this.entries.keys().next().value as string);
    this.entries.set(advertiserId, ws);
    return ws;
  }
}
