/**
 * Keyset pages over the local server: every document exactly once, in order, when many share the sort value (the
 * page reads a range from the last value and drops the ties already shown) and when a page ends inside a tie.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Collection } from 'mongodb';
import { keysetPage, type Page, type PageKey } from '../../../src/substrate/mongo/keyset-page.js';
import { testRuntime } from '../../support/harness.js';
import type { Runtime } from '../../../app/runtime.js';

interface Doc {
  _id: string;
  tenant: string;
  at: Date;
}

describe('keyset pages', () => {
  let runtime: Runtime;
  let docs: Collection<Doc>;
  beforeAll(async () => {
    runtime = testRuntime();
    docs = runtime.db.collection<Doc>(`keyset_page_${randomUUID().slice(0, 8)}`);
  });
  afterAll(async () => {
    await docs?.drop().catch(() => undefined);
    await runtime?.close();
  });

  it('returns every document once, in order, across ties and page ends inside them, both ways', async () => {
    const tenant = `t-${randomUUID().slice(0, 8)}`;
    const t = (ms: number) => new Date(Date.UTC(2026, 0, 1) + ms);
    // Seven documents at one instant, two before it and two after.
    const written: Doc[] = [
      ...[0, 1].map((i) => ({ _id: `a${i}`, tenant, at: t(i) })),
      ...[0, 1, 2, 3, 4, 5, 6].map((i) => ({ _id: `m${i}`, tenant, at: t(10) })),
      ...[0, 1].map((i) => ({ _id: `z${i}`, tenant, at: t(20 + i) })),
      { _id: 'other', tenant: 'someone-else', at: t(10) },
    ];
    await docs.insertMany(written);
    for (const order of [1, -1] as const) {
      for (const limit of [1, 2, 3, 50]) {
        const seen: string[] = [];
        let after: PageKey | null = null;
        for (let pages = 0; pages < 20; pages++) {
          const page: Page<Doc> = await keysetPage(docs, { tenant }, 'at', order, limit, after);
          seen.push(...page.items.map((d) => d._id));
          if (!page.next) break;
          after = page.next;
        }
        const expected = written
          .filter((d) => d.tenant === tenant)
          .sort((x, y) => order * (x.at.getTime() - y.at.getTime() || (x._id < y._id ? -1 : 1)))
          .map((d) => d._id);
        expect(seen, `order ${order}, limit ${limit}`).toEqual(expected);
      }
    }
  });
});
