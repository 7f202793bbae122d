import { describe, expect, it } from 'vitest';
import { canariesIn, leaksOf, remaining, scoreQuestion, type Context } from '../../../eval/metrics.js';
import type { Question, ScriptEvent } from '../../../eval/workloads/script.js';

const at = (day: number) => new Date(Date.UTC(2026, 2, 2 + day, 9));
const event = (id: string, over: Partial<ScriptEvent>): ScriptEvent => ({
  id,
  at: at(0),
  tenant: 'acme',
  principal: 'writer',
  scope: 'tenant',
  subjects: ['project'],
  text: id,
  ...over,
});
const events = [
  event('old', { at: at(0), fact: { key: 'owner:api', value: 'Priya' }, text: 'Priya owns the api.' }),
  event('new', { at: at(5), fact: { key: 'owner:api', value: 'Tomas' }, text: 'The api moves to Tomas.' }),
  event('other', { at: at(1), fact: { key: 'owner:web', value: 'Amara' }, text: 'Amara owns the web.' }),
  event('mine', { scope: 'principal', principal: 'asker', text: 'my draft' }),
  event('theirs', { scope: 'principal', principal: 'colleague', text: 'their draft CNRY-1' }),
  event('foreign', { tenant: 'globex', text: 'globex note CNRY-2' }),
];
const byId = new Map(events.map((e) => [e.id, e]));
const question: Question = {
  id: 'q1',
  workload: 'W1',
  askedAt: at(6),
  tenant: 'acme',
  principal: 'asker',
  text: 'Who owns the api?',
  intent: 'current',
  key: 'owner:api',
  expected: 'Tomas',
};
const context = (...items: [string, boolean][]): Context => ({
  items: items.map(([eventId, notInForce]) => ({ eventId, text: byId.get(eventId)!.text, notInForce })),
  tokens: 0,
  ms: 0,
});

describe('evaluation metrics', () => {
  it('counts a context holding the value in force as recalled and temporally correct', () => {
    expect(scoreQuestion(question, context(['new', false], ['other', false]), byId)).toEqual({
      recalled: true,
      stale: false,
      temporallyCorrect: true,
    });
  });

  it('counts a planted earlier value served as if in force as stale, even beside the right one', () => {
    const score = scoreQuestion(question, context(['new', false], ['old', false]), byId);
    expect(score.stale).toBe(true);
    expect(score.recalled).toBe(true);
    expect(score.temporallyCorrect).toBe(false);
  });

  it('does not count an earlier value the system marks as out of force as stale', () => {
    expect(scoreQuestion(question, context(['new', false], ['old', true]), byId).stale).toBe(false);
  });

  it('counts a context holding only the earlier value as stale and not recalled', () => {
    expect(scoreQuestion(question, context(['old', false]), byId)).toEqual({
      recalled: false,
      stale: true,
      temporallyCorrect: false,
    });
  });

  it('scores an as-of question by the value in force at the date asked about', () => {
    const past = { ...question, intent: 'as-of' as const, asOf: at(2), expected: 'Priya' };
    expect(scoreQuestion(past, context(['old', false]), byId).temporallyCorrect).toBe(true);
    expect(scoreQuestion(past, context(['old', false], ['new', false]), byId).stale).toBe(true);
  });

  it("counts another tenant's items and another principal's private items as leaks, and the asker's own as none", () => {
    expect(leaksOf(question, context(['mine', false], ['new', false]), byId)).toEqual({
      crossTenant: 0,
      crossScope: 0,
    });
    expect(leaksOf(question, context(['theirs', false], ['foreign', false], ['mine', false]), byId)).toEqual({
      crossTenant: 1,
      crossScope: 1,
    });
  });

  it('finds the canaries still present in any text', () => {
    const found = canariesIn(['their draft CNRY-1', 'nothing here'], ['CNRY-1', 'CNRY-2']);
    expect([...found]).toEqual(['CNRY-1']);
    expect(remaining(['CNRY-1', 'CNRY-2'], found)).toEqual(['CNRY-1']);
  });
});
