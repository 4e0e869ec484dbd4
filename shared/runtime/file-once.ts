import fs from 'node:fs';
import { randomUUID } from 'node:crypto';

/**
 * Creates `file` with `contents` unless it exists, and returns what the file holds. Several
 * processes starting together (API processes of one host) all end up with the first writer's
 * contents: the file appears whole through a hard link, never half-written.
 */
export function createFileOnce(file: string, contents: string): string {
  const draft = `${file}.${process.pid}.${randomUUID()}`;
  fs.writeFileSync(draft, contents, { mode: 0o600 });
  try {
    fs.linkSync(draft, file);
    return contents;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    return fs.readFileSync(file, 'utf8');
  } finally {
    fs.rmSync(draft, { force: true });
  }
}
