import fs from 'node:fs';
import path from 'node:path';
import { createHash, randomUUID } from 'node:crypto';
import type { Knex } from 'knex';

/** Content types we store, with the extension that goes into the content-addressed name. */
export const ASSET_TYPES: Record<string, string> = {
  'image/png': 'png',
  'image/jpeg': 'jpg',
  'image/gif': 'gif',
  'image/webp': 'webp',
  'video/mp4': 'mp4',
  'video/webm': 'webm',
  'audio/mpeg': 'mp3',
  'audio/wav': 'wav',
  'audio/ogg': 'ogg',
  'application/pdf': 'pdf',
};

/** What else the store keeps beyond uploads: the text of a browser job's evidence. */
const EVIDENCE_TYPES: Record<string, string> = { 'text/plain; charset=utf-8': 'txt' };
const STORED_TYPES: Record<string, string> = { ...ASSET_TYPES, ...EVIDENCE_TYPES };

/** Stored names are `<sha256 hex>.<ext>`; anything else cannot name a stored file (so no traversal). */
export const ASSET_NAME = /^[a-f0-9]{64}\.[a-z0-9]{2,5}$/;

export interface StoredAsset {
  name: string;
  url: string;
  fingerprint: string; // sha256:<64 hex>
  contentType: string;
  sizeBytes: number;
}

export interface AssetFile {
  name: string;
  sha256: string;
  contentType: string;
  sizeBytes: number;
  path: string;
}

export class AssetStore {
  constructor(
    private readonly db: Knex,
    readonly dir: string,
  ) {}

  /** Content-addressed: the same bytes always land at the same name, stored once. */
  async put(bytes: Buffer, contentType: string, owner: { advertiserId?: string; userId?: string } = {}): Promise<StoredAsset> {
    const ext = STORED_TYPES[contentType];
    if (!ext) throw new Error(`unsupported asset content type ${contentType}`);
    const sha256 = createHash('sha256').update(bytes).digest('hex');
    const name = `${sha256}.${ext}`;
    const target = path.join(this.dir, name);
    if (!fs.existsSync(target)) {
      fs.mkdirSync(this.dir, { recursive: true });
      // Write then rename, so a reader never sees half a file.
      const tmp = path.join(this.dir, `.${name}.${randomUUID()}.tmp`);
      await fs.promises.writeFile(tmp, bytes);
      await fs.promises.rename(tmp, target);
    }
    await this.db('assets')
      .insert({
        name,
        sha256,
        content_type: contentType,
        size_bytes: bytes.length,
        advertiser_id: owner.advertiserId ?? null,
        uploaded_by: owner.userId ?? null,
      })
      .onConflict('name')
      .ignore();
    if (owner.advertiserId) {
      await this.db('asset_owners')
        .insert({ asset_name: name, advertiser_id: owner.advertiserId, uploaded_by: owner.userId ?? null })
        .onConflict(['asset_name', 'advertiser_id'])
        .ignore();
    }
    return { name, url: `/files/assets/${name}`, fingerprint: `sha256:${sha256}`, contentType, sizeBytes: bytes.length };
  }

  async find(name: string): Promise<AssetFile | null> {
    if (!ASSET_NAME.test(name)) return null;
    const row = await this.db('assets').where({ name }).first();
    if (!row) return null;
    const file = path.join(this.dir, name);
    return { name, sha256: row.sha256, contentType: row.content_type, sizeBytes: Number(row.size_bytes), path: file };
  }

  /** Readiness: the evidence store is a folder this process may write into. */
  async checkWritable(): Promise<void> {
    // Read-only, so that probing readiness never writes: the folder is created once at start.
    const stat = await fs.promises.stat(this.dir);
    if (!stat.isDirectory()) throw new Error('asset storage is not a directory');
    await fs.promises.access(this.dir, fs.constants.W_OK | fs.constants.X_OK);
  }
}
