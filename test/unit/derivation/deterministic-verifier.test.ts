import { describe, expect, it } from 'vitest';
import { decompose } from '../../../src/governance/derivation/obligations.js';
import {
  verifyDeterministically,
  verifyHolistically,
} from '../../../src/governance/derivation/deterministic-verifier.js';

const passage = (id: string, text: string) => ({ id, text, at: new Date(0) });
const MEMORY = 'The user moved to Berlin in March because of the new job at Siemens.';

function labels(content: string, texts: string[]): Record<string, string> {
  const obligations = decompose(content);
  const verdicts = verifyDeterministically(
    obligations,
    texts.map((t, i) => passage(`e${i + 1}`, t)),
  );
  return Object.fromEntries(
    obligations.map((o, i) => [o.kind === 'relation' ? `relation:${o.relation}` : o.kind, verdicts[i]!.label]),
  );
}

describe('decomposing a memory into obligations', () => {
  it('splits a causal composition into two claims, a time qualifier and the relation between the claims', () => {
    const obligations = decompose(MEMORY);
    expect(obligations.map((o) => o.kind)).toEqual(['claim', 'time', 'claim', 'relation']);
    const relation = obligations[3]!;
    expect(relation).toMatchObject({ kind: 'relation', relation: 'cause', between: ['o1', 'o3'] });
  });

  it('reads "Because B, A" with the cause first and still relates A to B', () => {
    const obligations = decompose('Because of the new job at Siemens, the user moved to Berlin.');
    const claims = obligations.filter((o) => o.kind === 'claim');
    expect(claims).toHaveLength(2);
    expect(obligations.find((o) => o.kind === 'relation')).toMatchObject({ relation: 'cause' });
  });

  it('makes "and" two claims without a relation, and marks negation, plans and numbers as qualifiers', () => {
    expect(decompose('The user adopted a dog and sold the old car.').map((o) => o.kind)).toEqual(['claim', 'claim']);
    expect(decompose('The user does not eat meat.').map((o) => o.kind)).toEqual(['claim', 'negation']);
    expect(decompose('The user plans to visit Porto.').map((o) => o.kind)).toEqual(['claim', 'uncertainty']);
    expect(decompose('The user has three kids.').map((o) => o.kind)).toEqual(['claim', 'quantity']);
  });

  it('gives the same ids to the same content every time', () => {
    expect(decompose(MEMORY)).toEqual(decompose(MEMORY));
  });
});

describe('the deterministic verifier', () => {
  it('supports a composition stated in one passage', () => {
    expect(labels(MEMORY, ['I moved to Berlin in March because I got a new job at Siemens.'])).toEqual({
      claim: 'supported',
      time: 'supported',
      'relation:cause': 'supported',
    });
  });

  it('supports a composition spread over passages when one passage links its two ends', () => {
    const got = labels(MEMORY, [
      'I moved to Berlin in March.',
      'I started a new job at Siemens.',
      'The Siemens job is the reason I moved.',
    ]);
    expect(got['relation:cause']).toBe('supported');
  });

  it('finds the relation insufficient when each end is supported but nothing links them', () => {
    const got = labels(MEMORY, ['I moved to Berlin in March.', 'I started a new job at Siemens.']);
    expect(got).toEqual({ claim: 'supported', time: 'supported', 'relation:cause': 'insufficient' });
  });

  it('finds the relation insufficient when both ends share a passage without a cue of the relation', () => {
    expect(labels(MEMORY, ['I moved to Berlin in March and I started a new job at Siemens.'])['relation:cause']).toBe(
      'insufficient',
    );
  });

  it('takes a passage that denies the link as contradicting the relation, not its ends', () => {
    const got = labels(MEMORY, [
      'I moved to Berlin in March.',
      'I started a new job at Siemens.',
      'I did not move because of the Siemens job; my partner lives there.',
    ]);
    expect(got).toEqual({ claim: 'supported', time: 'supported', 'relation:cause': 'contradicted' });
  });

  it('takes a different month in the supporting passage as contradicting the time qualifier', () => {
    expect(labels(MEMORY, ['I moved to Berlin in May because I got a new job at Siemens.']).time).toBe('contradicted');
  });

  it('does not read a plan as support for a completed fact', () => {
    expect(labels('The user moved to Berlin.', ['I plan to move to Berlin next year.']).claim).toBe('insufficient');
  });

  it('contradicts an assertion the evidence denies, and calls it ambiguous when the evidence says both', () => {
    expect(labels('The user eats meat.', ['I never eat meat.']).claim).toBe('contradicted');
    expect(labels('The user eats meat.', ['I eat meat on Sundays.', 'I no longer eat meat.']).claim).toBe('ambiguous');
  });

  it('reads a negation only in the clause it belongs to, and a time after "before" as a qualifier, not a clause', () => {
    const obligations = decompose('Ana prefers e-mail; no phone calls before noon.');
    const verdicts = verifyDeterministically(obligations, [
      passage('e1', 'Ana prefers to be contacted by e-mail, never by phone before noon.'),
    ]);
    expect(obligations.map((o, i) => [o.kind, verdicts[i]!.label])).toEqual([
      ['claim', 'supported'],
      ['claim', 'supported'],
      ['negation', 'supported'],
    ]);
    expect(decompose('No phone calls before noon.').map((o) => o.kind)).toEqual(['claim', 'negation']);
  });

  it('takes a different count of the same thing as contradicting the quantity', () => {
    expect(labels('The user has three kids.', ['I have two kids.']).quantity).toBe('contradicted');
    expect(labels('The user has three kids.', ['I have three kids.']).quantity).toBe('supported');
  });

  it('holistically accepts a composition whose words all appear somewhere: the gap the obligations close', () => {
    const evidence = [passage('e1', 'I moved to Berlin in March.'), passage('e2', 'I started a new job at Siemens.')];
    expect(verifyHolistically(MEMORY, evidence)).toBe('supported');
    expect(verifyHolistically(MEMORY, [passage('e1', 'I moved to Berlin in March.')])).toBe('insufficient');
  });
});
