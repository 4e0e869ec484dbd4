import { readFileSync } from 'node:fs';
import path from 'node:path';
import { INTEREST_NODES, InterestNode, nodeByKey } from '../../shared/personas/interest-taxonomy';
import taxonomy from '../../shared/personas/taxonomy/iab-interests.json';

// The published rows our taxonomy uses, copied from the IAB Tech Lab
// Audience Taxonomy 1.1 file (source and commit in the excerpt's header).
interface Row {
  parentId: string;
  tier1: string;
  name: string;
}

function readExcerpt(): Map<string, Row> {
  const text = readFileSync(path.resolve(__dirname, 'iab-audience-taxonomy-1.1-excerpt.tsv'), 'utf8');
  const lines = text.split('\n').filter((l) => l.trim() && !l.startsWith('#'));
  const header = lines.shift()!.split('\t');
  expect(header.slice(1, 5)).toEqual(['Unique ID', 'Parent ID', 'Condensed Name (1st, 2nd, Last Tier)', 'Tier 1']);
  const rows = new Map<string, Row>();
  for (const line of lines) {
    const cells = line.split('\t');
    const tiers = cells.slice(4, 10).filter(Boolean);
    rows.set(cells[1]!, { parentId: cells[2]!, tier1: cells[4]!, name: tiers[tiers.length - 1]! });
  }
  return rows;
}

const INTEREST_ROOT = '206';
const rows = readExcerpt();
const iabNodes = INTEREST_NODES.filter((n) => n.iabId !== null);
const localNodes = INTEREST_NODES.filter((n) => n.iabId === null);

function parentOf(node: InterestNode): InterestNode | undefined {
  return node.parent === null ? undefined : nodeByKey(node.parent);
}

describe('interest taxonomy against the published IAB Audience Taxonomy 1.1', () => {
  it('names its source file and commit and says every id was checked', () => {
    expect(taxonomy.sourceFile.path).toBe('Audience Taxonomies/Audience Taxonomy 1.1.tsv');
    expect(taxonomy.sourceFile.commit).toMatch(/^[0-9a-f]{40}$/);
    expect(taxonomy.iabIdsVerified).toBe(true);
  });

  it('every node marked as IAB has an id of the interest branch in the published file, with its published name', () => {
    expect(iabNodes.length).toBeGreaterThan(50);
    for (const node of iabNodes) {
      const row = rows.get(node.iabId!);
      expect({ key: node.key, found: row !== undefined }).toEqual({ key: node.key, found: true });
      expect({ key: node.key, tier1: row!.tier1, name: row!.name }).toEqual({ key: node.key, tier1: 'Interest', name: node.name });
    }
  });

  it('every IAB node sits under its published parent (top-level nodes under the Interest root)', () => {
    for (const node of iabNodes) {
      const parent = parentOf(node);
      const expected = parent === undefined ? INTEREST_ROOT : parent.iabId;
      expect({ key: node.key, parentId: rows.get(node.iabId!)!.parentId }).toEqual({ key: node.key, parentId: expected });
    }
  });

  it('our own nodes carry no IAB id and hang under a node of the taxonomy', () => {
    expect(localNodes.map((n) => n.key)).toEqual(expect.arrayContaining(['yoga', 'padel', 'staycations', 'wine']));
    for (const node of localNodes) {
      if (node.parent !== null) expect({ key: node.key, parent: parentOf(node)?.key }).toEqual({ key: node.key, parent: node.parent });
      // Not a published node under another name: none of the rows we use carries its name.
      const publishedNames = [...rows.values()].map((r) => r.name.toLowerCase());
      expect({ key: node.key, published: publishedNames.includes(node.name.toLowerCase()) }).toEqual({ key: node.key, published: false });
    }
  });

  it('no two nodes share an IAB id or a key', () => {
    const ids = iabNodes.map((n) => n.iabId);
    expect(new Set(ids).size).toBe(ids.length);
    const keys = INTEREST_NODES.map((n) => n.key);
    expect(new Set(keys).size).toBe(keys.length);
  });
});
