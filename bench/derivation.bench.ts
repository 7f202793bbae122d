/**
 * Derivation-audit benchmark (`npm run bench:derivation`; pure, no stack).
 *
 * The controlled suite of bench/lib/derivation-suite.ts: BENCH_DERIVATION_FAMILIES (default 72) matched families ×
 * {local, distributed evidence} × {valid, invalid composition}, plus five controls per family. Three write-time
 * settings over the same cases (seed 002, Table 2):
 *  1. citation-only holistic — the memory as one claim against its cited passages;
 *  2. expanded-history holistic — the same check against the expanded view (citations + up to 12 BM25 passages
 *     from before the memory, 16 in all);
 *  3. expanded-history obligation-aware — Lethe's audit (obligations, deterministic verifier, both views).
 * A memory is admitted when its label is supported (or repaired). Reported: unsupported-admission rate (admitted /
 * invalid), valid retention (admitted / valid), repaired retention (admitted / valid with incomplete citations),
 * unresolved rate (unresolved / all), contradicted memories admitted; then admission by variant, and the kinds of
 * obligation behind the obligation-aware setting's errors. Table to stdout.
 */
import { auditDerivation, type DerivationVerdict } from '../src/governance/derivation/derivation-audit.js';
import {
  createDeterministicVerifier,
  verifyHolistically,
} from '../src/governance/derivation/deterministic-verifier.js';
import { evidenceViews } from '../src/governance/derivation/evidence-scope.js';
import { admitsWithoutReview } from '../src/governance/derivation/labels.js';
import { buildSuite, VARIANTS, type SuiteCase } from './lib/derivation-suite.js';

const FAMILIES = Number(process.env.BENCH_DERIVATION_FAMILIES ?? 72);
const SETTINGS = ['citation-only holistic', 'expanded-history holistic', 'expanded-history obligation-aware'] as const;
type Setting = (typeof SETTINGS)[number];

interface Outcome {
  admitted: boolean;
  unresolved: boolean;
  verdict?: DerivationVerdict;
}

async function judge(c: SuiteCase, setting: Setting, verifier = createDeterministicVerifier()): Promise<Outcome> {
  if (setting === 'expanded-history obligation-aware') {
    const verdict = await auditDerivation(c, { verifier, timeoutMs: 5_000 });
    return { admitted: admitsWithoutReview(verdict.label), unresolved: verdict.label === 'unresolved', verdict };
  }
  const views = evidenceViews(c.content, c.cited, c.pool, c.before);
  const evidence = setting === 'citation-only holistic' ? views.citationOnly : views.expanded;
  return { admitted: verifyHolistically(c.content, evidence) === 'supported', unresolved: false };
}

const rate = (n: number, d: number) => (d === 0 ? '   —  ' : (n / d).toFixed(3).padStart(6));

async function main(): Promise<void> {
  const suite = buildSuite(FAMILIES);
  const results = new Map<Setting, Outcome[]>();
  const started = performance.now();
  for (const s of SETTINGS) results.set(s, await Promise.all(suite.map((c) => judge(c, s))));
  const ms = performance.now() - started;

  const contradicted = suite.filter((c) => c.contradicted).length;
  console.log(
    `derivation audit benchmark: ${FAMILIES} families, ${suite.length} cases (${suite.filter((c) => c.valid).length} valid, ${suite.filter((c) => !c.valid).length} invalid of which ${contradicted} contradicted); ${ms.toFixed(0)} ms for all three settings`,
  );
  const MATCHED: readonly string[] = ['local-valid', 'distributed-valid', 'local-invalid', 'distributed-invalid'];
  for (const [title, cases] of [
    ['all cases (matched variants and controls)', suite],
    [
      'matched variants only: {local, distributed} × {valid, invalid}',
      suite.filter((c) => MATCHED.includes(c.variant)),
    ],
  ] as const) {
    const invalid = cases.filter((c) => !c.valid);
    const valid = cases.filter((c) => c.valid);
    const repairable = cases.filter((c) => c.valid && c.citationsIncomplete);
    console.log(`\n${title}: ${cases.length} cases`);
    console.log(
      'setting                              unsupported-admission  valid-retention  repaired-retention  unresolved  contradicted-admitted',
    );
    for (const s of SETTINGS) {
      const r = results.get(s)!;
      const count = (xs: SuiteCase[], pred: (o: Outcome) => boolean) =>
        xs.filter((c) => pred(r[suite.indexOf(c)]!)).length;
      const cells = [
        rate(
          count(invalid, (o) => o.admitted),
          invalid.length,
        ).padStart(21),
        rate(
          count(valid, (o) => o.admitted),
          valid.length,
        ).padStart(15),
        rate(
          count(repairable, (o) => o.admitted),
          repairable.length,
        ).padStart(18),
        (s.includes('holistic')
          ? 'n/a'
          : rate(
              count(cases, (o) => o.unresolved),
              cases.length,
            )
        ).padStart(10),
        String(
          count(
            cases.filter((c) => c.contradicted),
            (o) => o.admitted,
          ),
        ).padStart(21),
      ];
      console.log(`${s.padEnd(36)} ${cells.join('  ')}`);
    }
  }

  console.log('\nadmitted by variant (gold: V valid, I invalid, C contradicted)');
  console.log(
    `variant                         gold  ${['citation holistic', 'expanded holistic', 'obligation-aware'].map((h) => h.padStart(19)).join('')}  unresolved`,
  );
  for (const v of VARIANTS) {
    const cases = suite.filter((c) => c.variant === v);
    const gold = cases[0]!.contradicted ? 'C' : cases[0]!.valid ? 'V' : 'I';
    const cells = SETTINGS.map((s) =>
      rate(cases.filter((c) => results.get(s)![suite.indexOf(c)]!.admitted).length, cases.length).padStart(19),
    );
    const unresolved = cases.filter(
      (c) => results.get('expanded-history obligation-aware')![suite.indexOf(c)]!.unresolved,
    ).length;
    console.log(
      `${v.padEnd(31)} ${gold.padStart(4)}  ${cells.join('')}  ${rate(unresolved, cases.length).padStart(10)}`,
    );
  }

  // What the obligation-aware setting got wrong, by the obligation kind responsible.
  const aware = results.get('expanded-history obligation-aware')!;
  const missed = new Map<string, number>();
  const refusedValid = new Map<string, number>();
  suite.forEach((c, i) => {
    const o = aware[i]!;
    if (!c.valid && o.admitted)
      missed.set(`${c.failing} (${c.variant})`, (missed.get(`${c.failing} (${c.variant})`) ?? 0) + 1);
    if (c.valid && !o.admitted) {
      for (const ob of o.verdict!.obligations.filter((x) => x.label !== 'supported')) {
        const key = `${ob.relation ? `relation:${ob.relation}` : ob.kind} ${ob.label}`;
        refusedValid.set(key, (refusedValid.get(key) ?? 0) + 1);
      }
    }
  });
  console.log('\nobligation-aware: invalid memories admitted, by the obligation that should have failed');
  for (const [k, n] of [...missed].sort((a, b) => b[1] - a[1])) console.log(`  ${k}: ${n}`);
  if (missed.size === 0) console.log('  none');
  console.log('obligation-aware: valid memories not admitted, by obligation kind and label');
  for (const [k, n] of [...refusedValid].sort((a, b) => b[1] - a[1])) console.log(`  ${k}: ${n}`);
  if (refusedValid.size === 0) console.log('  none');
}

await main();
