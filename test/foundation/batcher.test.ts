import { Batcher, ItemFailure, eachAlone, unlessDatabaseDown } from '../../shared/db/batcher';

/** Work from concurrent callers goes in batches: alone while nothing waits, together while a batch is being written. */
interface Gate {
  open: () => void;
  opened: Promise<void>;
}
const gate = (): Gate => {
  let open = () => {};
  const opened = new Promise<void>((r) => (open = r));
  return { open, opened };
};

/** A writer that records each batch and holds it until its gate opens. */
function recorder(fail?: (item: string) => boolean) {
  const batches: string[][] = [];
  const gates: Gate[] = [];
  const write = async (items: readonly string[]) => {
    batches.push([...items]);
    const g = gate();
    gates.push(g);
    await g.opened;
    if (fail && items.some(fail)) throw new Error(`refused ${items.filter(fail).join(',')}`);
    return items.map((i) => i.toUpperCase());
  };
  return { batches, gates, write };
}

const tick = () => new Promise((r) => setImmediate(r));

describe('Batcher', () => {
  test('a follow-up that fails for one item after its batch was written fails that item alone, and nothing is written again', async () => {
    const written: string[][] = [];
    // The statement "commits" every item; the follow-up of one of them then fails.
    const write = async (items: readonly string[]) => {
      written.push([...items]);
      return eachAlone(items, async (item) => {
        if (item === 'b') throw new Error('the follow-up of b failed');
        return item.toUpperCase();
      });
    };
    const b = new Batcher(write, { concurrency: 1, maxSize: 10, retryAlone: () => true });
    // Submitted in one turn: one batch.
    const [a, bb, c] = ['a', 'b', 'c'].map((x) => b.submit(x));
    expect(await a).toBe('A');
    await expect(bb).rejects.toThrow('the follow-up of b failed');
    expect(await c).toBe('C');
    // One write each: the batch was not written again item by item, which would redo finished work.
    expect(written).toEqual([['a', 'b', 'c']]);
    expect(new ItemFailure('why').cause).toBe('why');
  });

  test('work submitted alone goes alone; work submitted while a batch is written goes together next', async () => {
    const { batches, gates, write } = recorder();
    const b = new Batcher(write, { concurrency: 1, maxSize: 10 });
    const first = b.submit('a');
    await tick();
    expect(batches).toEqual([['a']]);
    const rest = ['b', 'c', 'd'].map((x) => b.submit(x));
    await tick();
    expect(batches).toHaveLength(1); // waiting for the first batch
    gates[0]!.open();
    expect(await first).toBe('A');
    await tick();
    expect(batches).toEqual([['a'], ['b', 'c', 'd']]);
    gates[1]!.open();
    expect(await Promise.all(rest)).toEqual(['B', 'C', 'D']);
  });

  test('up to `concurrency` batches at once, each at most `maxSize`', async () => {
    const { batches, gates, write } = recorder();
    const b = new Batcher(write, { concurrency: 2, maxSize: 2 });
    const all = ['a', 'b', 'c', 'd', 'e', 'f', 'g'].map((x) => b.submit(x));
    await tick();
    expect(batches).toEqual([
      ['a', 'b'],
      ['c', 'd'],
    ]);
    gates[0]!.open();
    await new Promise((r) => setTimeout(r, 5));
    expect(batches).toEqual([
      ['a', 'b'],
      ['c', 'd'],
      ['e', 'f'],
    ]);
    for (let i = 1; i < 4; i++) {
      gates[i]!.open();
      await new Promise((r) => setTimeout(r, 5));
    }
    expect(await Promise.all(all)).toEqual(['A', 'B', 'C', 'D', 'E', 'F', 'G']);
    expect(batches.at(-1)).toEqual(['g']);
  });

  test('items with the same key never share a batch, and keep their order', async () => {
    const { batches, gates, write } = recorder();
    const b = new Batcher(write, { concurrency: 1, maxSize: 10, key: (x) => x[0]! });
    const all = ['a1', 'b1', 'a2', 'c1', 'a3'].map((x) => b.submit(x));
    await tick();
    expect(batches).toEqual([['a1', 'b1', 'c1']]);
    gates[0]!.open();
    await new Promise((r) => setTimeout(r, 5));
    expect(batches[1]).toEqual(['a2']);
    gates[1]!.open();
    await new Promise((r) => setTimeout(r, 5));
    gates[2]!.open();
    expect(await Promise.all(all)).toEqual(['A1', 'B1', 'A2', 'C1', 'A3']);
    expect(batches).toEqual([['a1', 'b1', 'c1'], ['a2'], ['a3']]);
  });

  test('a failed batch is written again item by item: only the failing item fails', async () => {
    const batches: string[][] = [];
    const b = new Batcher(
      async (items: readonly string[]) => {
        batches.push([...items]);
        if (items.includes('bad')) throw new Error('refused bad');
        return items.map((i) => i.toUpperCase());
      },
      { concurrency: 1, maxSize: 10 },
    );
    const settled = await Promise.allSettled(['a', 'bad', 'c'].map((x) => b.submit(x)));
    expect(settled).toEqual([
      { status: 'fulfilled', value: 'A' },
      { status: 'rejected', reason: new Error('refused bad') },
      { status: 'fulfilled', value: 'C' },
    ]);
    expect(batches).toEqual([['a', 'bad', 'c'], ['a'], ['bad'], ['c']]);
  });

  test('a batch failing for everyone (the database down) fails every item at once, without writing each again', async () => {
    const batches: string[][] = [];
    const down = Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
    const b = new Batcher(
      async (items: readonly string[]) => {
        batches.push([...items]);
        throw down;
      },
      { concurrency: 1, maxSize: 10, retryAlone: unlessDatabaseDown },
    );
    const settled = await Promise.allSettled(['a', 'b', 'c'].map((x) => b.submit(x)));
    expect(settled.map((r) => r.status)).toEqual(['rejected', 'rejected', 'rejected']);
    expect(settled.map((r) => (r as PromiseRejectedResult).reason)).toEqual([down, down, down]);
    expect(batches).toEqual([['a', 'b', 'c']]);
  });

  test('a batch undone by a deadlock or a timeout is written again item by item', async () => {
    const batches: string[][] = [];
    const b = new Batcher(
      async (items: readonly string[]) => {
        batches.push([...items]);
        if (items.length > 1) throw Object.assign(new Error('deadlock detected'), { code: '40P01' });
        return items.map((i) => i.toUpperCase());
      },
      { concurrency: 1, maxSize: 10, retryAlone: unlessDatabaseDown },
    );
    expect(await Promise.all(['a', 'b'].map((x) => b.submit(x)))).toEqual(['A', 'B']);
    expect(batches).toEqual([['a', 'b'], ['a'], ['b']]);
  });
});
