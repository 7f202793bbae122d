import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import {
  decideFindings,
  mergeFindings,
  openFindings,
  repeats,
  repeatsAnyOf,
  sentenceSamples,
  type CopyFinding,
  type FindingProbe,
} from '../../../src/governance/erasure/copy-findings.js';

const kindOf = (id: string): CopyFinding['kind'] => (id.startsWith('evt_') ? 'event' : 'memory');
const hits = (entries: [string, FindingProbe[]][]) => new Map(entries.map(([id, p]) => [id, new Set(p)]));

describe('copy findings', () => {
  it('opens a finding per record reached, with every probe that reached it', () => {
    const merged = mergeFindings(
      [],
      hits([
        ['mem_b', ['text:api', 'text:elasticsearch']],
        ['evt_a', ['content-hash:mongodb']],
      ]),
      kindOf,
    );
    expect(merged).toEqual([
      { id: 'evt_a', kind: 'event', probes: ['content-hash:mongodb'], resolution: 'open' },
      { id: 'mem_b', kind: 'memory', probes: ['text:api', 'text:elasticsearch'], resolution: 'open' },
    ]);
  });

  it('keeps decided findings, drops open ones no probe reaches any more, and adds new ones as open', () => {
    const previous: CopyFinding[] = [
      { id: 'mem_stated', kind: 'memory', probes: ['text:api'], resolution: 'stated' },
      { id: 'mem_extended', kind: 'memory', probes: ['text:api'], resolution: 'extended' },
      { id: 'mem_gone', kind: 'memory', probes: ['text:api'], resolution: 'open' },
    ];
    const merged = mergeFindings(
      previous,
      hits([
        ['mem_stated', ['content-hash:mongodb']],
        ['mem_new', ['text:mongodb']],
      ]),
      kindOf,
    );
    expect(merged.map((f) => [f.id, f.resolution])).toEqual([
      ['mem_extended', 'extended'],
      ['mem_new', 'open'],
      ['mem_stated', 'stated'],
    ]);
    expect(merged.find((f) => f.id === 'mem_stated')!.probes).toEqual(['content-hash:mongodb', 'text:api']);
  });

  it('applies a decision to the open findings only', () => {
    const findings: CopyFinding[] = [
      { id: 'a', kind: 'memory', probes: ['text:api'], resolution: 'open' },
      { id: 'b', kind: 'memory', probes: ['text:api'], resolution: 'stated' },
    ];
    expect(decideFindings(findings, 'extend').map((f) => f.resolution)).toEqual(['extended', 'stated']);
    expect(openFindings(decideFindings(findings, 'certify'))).toEqual([]);
  });

  it('samples sentences of five words or more, and a short text as itself', () => {
    expect(sentenceSamples('The card ends with 4242 today.  Ok.  Call   me when you land, please!')).toEqual([
      'The card ends with 4242 today.',
      'Call me when you land, please!',
    ]);
    expect(sentenceSamples('Prefers e-mail.')).toEqual(['Prefers e-mail.']);
    expect(sentenceSamples('   ')).toEqual([]);
  });

  it('finds a sample repeated inside other text, whatever its case and spacing', () => {
    expect(repeats('Bob was told:  the CARD ends with 4242 today. More.', 'The card ends with 4242 today.')).toBe(true);
    expect(repeats('The card ends with 4243 today.', 'The card ends with 4242 today.')).toBe(false);
    expect(repeats('anything', '  ')).toBe(false);
  });

  it('every sentence sampled from a text is found repeated in that text', () => {
    fc.assert(
      fc.property(fc.array(fc.stringMatching(/^[A-Za-z0-9 ,.!?]{0,40}$/), { maxLength: 8 }), (parts) => {
        const text = parts.join(' ');
        for (const sample of sentenceSamples(text)) expect(repeats(text, sample)).toBe(true);
      }),
    );
  });

  it('finds a text repeating any of many samples, wherever in the text and whatever its case and spacing', () => {
    const matches = repeatsAnyOf(['The card ends with 4242 today.', 'Alice lives at the old mill.', 'Ok.']);
    expect(matches('Bob was told:  "the CARD ends with 4242 today." More.')).toBe(true);
    expect(matches('xalice lives at the old mill. yes')).toBe(true);
    expect(matches('He said ok. then left')).toBe(true);
    expect(matches('The card ends with 4243 today. Alice lives at the new mill.')).toBe(false);
    expect(repeatsAnyOf([])('anything')).toBe(false);
  });

  it('repeatsAnyOf says what repeats says of each sample', () => {
    const word = fc.stringMatching(/^[A-Za-z0-9,.!?"]{1,6}$/);
    const text = fc.array(word, { maxLength: 12 }).map((w) => w.join(' '));
    fc.assert(
      fc.property(
        fc.array(text, { maxLength: 6 }),
        text,
        fc.array(fc.nat(), { maxLength: 4 }),
        (samples, other, picks) => {
          // Some samples are cut out of the text itself, so that matches are common.
          const words = other.split(' ');
          const cut = picks.map((p, i) =>
            words.slice(p % (words.length + 1), (p % (words.length + 1)) + 2 + i).join(' '),
          );
          const all = [...samples, ...cut];
          expect(repeatsAnyOf(all)(other)).toBe(all.some((s) => repeats(other, s)));
        },
      ),
    );
  });
});
