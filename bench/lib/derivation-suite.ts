/**
 * The controlled suite of the derivation benchmark, in the shape of seed 002's matched families: each family is
 * one candidate memory ("the user did E because C", or "after C") whose wording and validity never change; only
 * the history around it does. Variants: local or distributed evidence × valid or invalid composition, plus
 * controls that remove the linking passage, swap a premise for an unrelated passage, place the link after the
 * memory, deny the relation, or bury the link under more matching passages than the budget holds. Every history
 * also carries passages of other families (same subject, other topics). Deterministic (seeded).
 */
import type { EvidencePassage } from '../../src/governance/derivation/verifier.port.js';
import { rng } from './substrate-measure.js';

export const VARIANTS = [
  'local-valid',
  'distributed-valid',
  'local-invalid',
  'distributed-invalid',
  'control-link-removed',
  'control-premise-swapped',
  'control-link-later',
  'control-relation-denied',
  'control-link-beyond-budget',
  'control-cue-in-another-sense',
] as const;
export type Variant = (typeof VARIANTS)[number];

export interface SuiteCase {
  family: number;
  variant: Variant;
  content: string;
  cited: EvidencePassage[];
  pool: EvidencePassage[];
  before: Date;
  /** Supported by the whole history before the memory (the reference label). */
  valid: boolean;
  /** The history contradicts it (only the relation-denied control). */
  contradicted: boolean;
  /** Valid, but its citations alone do not support it: a repair is needed to keep it. */
  citationsIncomplete: boolean;
  /** The obligation kind that makes an invalid case invalid. */
  failing?: 'relation' | 'claim';
}

interface Effect {
  /** third person, for the memory */ memory: string;
  /** first person, past */ passage: string;
  /** short first-person form for links ("moved to Lisbon") */ short: string;
  /** infinitive ("move to Lisbon") */ inf: string;
}
interface Cause {
  memory: string;
  passage: string;
  /** noun phrase for links ("the Siemens job") */ noun: string;
  /** gerund for temporal memories ("starting a new job at Siemens") */ gerund: string;
}

const CITIES = [
  'Lisbon',
  'Porto',
  'Berlin',
  'Munich',
  'Vienna',
  'Prague',
  'Krakow',
  'Dublin',
  'Utrecht',
  'Ghent',
  'Lyon',
  'Turin',
];
const NAMES = ['Ana', 'Ben', 'Chloe', 'Dario', 'Elif', 'Farid', 'Greta', 'Hugo', 'Ines', 'Jonas', 'Kira', 'Lior'];
const COMPANIES = [
  'Siemens',
  'Bosch',
  'Philips',
  'Nokia',
  'Spotify',
  'Zalando',
  'Airbus',
  'Unilever',
  'Ericsson',
  'Adyen',
  'Sap',
  'Infineon',
];

function effects(i: number): Effect[] {
  const city = CITIES[i % 12]!;
  const name = NAMES[(i + 3) % 12]!;
  return [
    { memory: `moved to ${city}`, passage: `I moved to ${city}`, short: `moved to ${city}`, inf: `move to ${city}` },
    { memory: `sold their Volvo`, passage: `I sold my Volvo`, short: `sold the Volvo`, inf: `sell the Volvo` },
    {
      memory: `adopted a dog named ${name}`,
      passage: `I adopted a dog named ${name}`,
      short: `adopted ${name}`,
      inf: `adopt ${name}`,
    },
    {
      memory: `joined the Boulder climbing gym`,
      passage: `I joined the Boulder climbing gym`,
      short: `joined the climbing gym`,
      inf: `join the climbing gym`,
    },
    {
      memory: `cancelled their Netflix subscription`,
      passage: `I cancelled my Netflix subscription`,
      short: `cancelled Netflix`,
      inf: `cancel Netflix`,
    },
    {
      memory: `started learning Portuguese`,
      passage: `I started learning Portuguese`,
      short: `started learning Portuguese`,
      inf: `learn Portuguese`,
    },
    {
      memory: `switched to a vegetarian diet`,
      passage: `I switched to a vegetarian diet`,
      short: `switched to a vegetarian diet`,
      inf: `switch to a vegetarian diet`,
    },
    {
      memory: `bought a cargo bike`,
      passage: `I bought a cargo bike`,
      short: `bought the cargo bike`,
      inf: `buy a cargo bike`,
    },
    {
      memory: `rented a flat in ${city}`,
      passage: `I rented a flat in ${city}`,
      short: `rented the flat in ${city}`,
      inf: `rent a flat in ${city}`,
    },
    {
      memory: `signed up for the ${city} marathon`,
      passage: `I signed up for the ${city} marathon`,
      short: `signed up for the marathon`,
      inf: `sign up for the marathon`,
    },
    {
      memory: `took a loan from Rabobank`,
      passage: `I took a loan from Rabobank`,
      short: `took the Rabobank loan`,
      inf: `take the Rabobank loan`,
    },
    { memory: `sold their piano`, passage: `I sold my piano`, short: `sold the piano`, inf: `sell the piano` },
  ];
}

function causes(i: number): Cause[] {
  const company = COMPANIES[i % 12]!;
  const name = NAMES[(i + 7) % 12]!;
  return [
    {
      memory: `they got a new job at ${company}`,
      passage: `I got a new job at ${company}`,
      noun: `the ${company} job`,
      gerund: `getting a new job at ${company}`,
    },
    {
      memory: `their doctor found a gluten allergy`,
      passage: `My doctor found a gluten allergy`,
      noun: `the gluten allergy`,
      gerund: `learning about a gluten allergy`,
    },
    {
      memory: `their sister ${name} had a baby`,
      passage: `My sister ${name} had a baby`,
      noun: `${name}'s baby`,
      gerund: `${name} having a baby`,
    },
    {
      memory: `they were promoted at ${company}`,
      passage: `I was promoted at ${company}`,
      noun: `the ${company} promotion`,
      gerund: `being promoted at ${company}`,
    },
    {
      memory: `their landlord raised the rent`,
      passage: `My landlord raised the rent`,
      noun: `the rent increase`,
      gerund: `the landlord raising the rent`,
    },
    {
      memory: `they failed the driving exam`,
      passage: `I failed the driving exam`,
      noun: `the failed driving exam`,
      gerund: `failing the driving exam`,
    },
    {
      memory: `their partner ${name} moved abroad`,
      passage: `My partner ${name} moved abroad`,
      noun: `${name} moving abroad`,
      gerund: `${name} moving abroad`,
    },
    {
      memory: `they won a photography prize`,
      passage: `I won a photography prize`,
      noun: `the photography prize`,
      gerund: `winning a photography prize`,
    },
    {
      memory: `their knee surgery went badly`,
      passage: `My knee surgery went badly`,
      noun: `the knee surgery`,
      gerund: `the knee surgery`,
    },
    {
      memory: `they got a scholarship from Leiden`,
      passage: `I got a scholarship from Leiden`,
      noun: `the Leiden scholarship`,
      gerund: `getting a scholarship from Leiden`,
    },
    {
      memory: `their company cut the travel budget`,
      passage: `My company cut the travel budget`,
      noun: `the travel budget cut`,
      gerund: `the travel budget cut`,
    },
    {
      memory: `their son ${name} started school`,
      passage: `My son ${name} started school`,
      noun: `${name} starting school`,
      gerund: `${name} starting school`,
    },
  ];
}

/** How a history states the link, varied on purpose: some phrasings carry no cue word the verifier knows. */
const LINKS: ((e: Effect, c: Cause) => string)[] = [
  (e, c) => `${cap(c.noun)} is the reason I ${e.short}.`,
  (e, c) => `I ${e.short} because of ${c.noun}.`,
  (e, c) => `${cap(c.noun)} made me ${e.inf}.`,
  (e, c) => `That is why I ${e.short}: ${c.noun}.`,
  (e, c) => `${cap(c.noun)} is what pushed me to ${e.inf}.`,
  (e, c) => `I only ${e.short} due to ${c.noun}.`,
  // No cue word at all: a link only a reader of meaning sees.
  (e, c) => `${cap(c.noun)} settled it, and I ${e.short}.`,
];
const TEMPORAL_LINKS: ((e: Effect, c: Cause) => string)[] = [
  (e, c) => `Right after ${c.noun} I ${e.short}.`,
  (e, c) => `I ${e.short} once ${c.noun} was settled.`,
  (e, c) => `First came ${c.noun}, then I ${e.short}.`,
];
const DENIALS: ((e: Effect, c: Cause) => string)[] = [
  (e, c) => `${cap(c.noun)} had nothing to do with why I ${e.short}.`,
  (e, c) => `It was not because of ${c.noun} that I ${e.short}.`,
  (e, c) => `I ${e.short}, but not because of ${c.noun}.`,
];
const UNRELATED = [
  'The weather was grey all week.',
  'I watched a documentary about whales.',
  'My favourite tea is jasmine.',
  'The printer at the office jammed again.',
  'We painted the kitchen yellow.',
  'I lost my umbrella on the tram.',
];

function cap(s: string): string {
  return s.charAt(0).toUpperCase() + s.slice(1);
}

const day = (d: number) => new Date(Date.UTC(2026, 10, 1 + d, 10));

export function buildSuite(families: number, seed = 2026): SuiteCase[] {
  const rnd = rng(seed);
  const specs = Array.from({ length: families }, (_, f) => {
    const e = effects(f)[f % 12]!;
    const c = causes(f)[(f + 1 + Math.floor(f / 12)) % 12]!;
    const temporal = f % 4 === 3;
    return { f, e, c, temporal };
  });
  const cases: SuiteCase[] = [];
  for (const { f, e, c, temporal } of specs) {
    const content = temporal ? `The user ${e.memory} after ${c.gerund}.` : `The user ${e.memory} because ${c.memory}.`;
    const link = temporal ? TEMPORAL_LINKS[f % TEMPORAL_LINKS.length]!(e, c) : LINKS[f % LINKS.length]!(e, c);
    const local = temporal
      ? `${e.passage} after ${c.gerund}.`
      : `${e.passage} because ${c.passage.replace(/^My /, 'my ')}.`;
    const pe = (d: number) => ({ id: `f${f}-effect`, text: `${e.passage}.`, at: day(d) });
    const pc = (d: number) => ({ id: `f${f}-cause`, text: `${c.passage}.`, at: day(d) });
    const pl = (d: number) => ({ id: `f${f}-link`, text: link, at: day(d) });
    // Passages of other families: the same subject's history on other topics.
    const noise = (n: number): EvidencePassage[] =>
      Array.from({ length: n }, (_, k) => {
        const other = specs[Math.floor(rnd() * specs.length)]!;
        const text = rnd() < 0.5 ? `${other.e.passage}.` : `${other.c.passage}.`;
        return {
          id: `f${f}-noise${k}`,
          text: other.f === f ? UNRELATED[k % UNRELATED.length]! : text,
          at: day(1 + Math.floor(rnd() * 8)),
        };
      });
    const before = day(10);
    const base = { family: f, content, before };
    const add = (variant: Variant, cited: EvidencePassage[], pool: EvidencePassage[], gold: Partial<SuiteCase>) =>
      cases.push({
        ...base,
        variant,
        cited,
        pool,
        valid: false,
        contradicted: false,
        citationsIncomplete: false,
        ...gold,
      });

    add('local-valid', [{ id: `f${f}-local`, text: local, at: day(5) }], noise(10), { valid: true });
    add('distributed-valid', [pe(2)], [pc(3), pl(6), ...noise(10)], { valid: true, citationsIncomplete: true });
    add(
      'local-invalid',
      [{ id: `f${f}-both`, text: `${e.passage} and ${c.passage.replace(/^My /, 'my ')}.`, at: day(5) }],
      noise(10),
      { failing: 'relation' },
    );
    add(
      'distributed-invalid',
      [pe(2)],
      [pc(3), { id: `f${f}-alt`, text: `I ${e.short} because my old routine felt stale.`, at: day(6) }, ...noise(10)],
      { failing: 'relation' },
    );
    add('control-link-removed', [pe(2)], [pc(3), ...noise(10)], { failing: 'relation' });
    add(
      'control-premise-swapped',
      [pe(2)],
      [{ id: `f${f}-swap`, text: UNRELATED[f % UNRELATED.length]!, at: day(3) }, ...noise(10)],
      { failing: 'claim' },
    );
    add('control-link-later', [pe(2)], [pc(3), pl(14), ...noise(10)], { failing: 'relation' });
    add(
      'control-relation-denied',
      [pe(2)],
      [pc(3), { id: `f${f}-deny`, text: DENIALS[f % DENIALS.length]!(e, c), at: day(6) }, ...noise(10)],
      {
        contradicted: true,
        failing: 'relation',
      },
    );
    // Both ends in one passage with a cue word of the relation used in another sense ("ever since" as time).
    const since = temporal
      ? `${e.passage}, and ${c.passage.replace(/^My /, 'my ')} when it rained.`
      : `Ever since I ${e.short}, ${c.passage.replace(/^My /, 'my ').replace(/^I /, 'I ')}.`;
    add('control-cue-in-another-sense', [{ id: `f${f}-since`, text: since, at: day(5) }], noise(10), {
      failing: 'relation',
    });
    // The link exists before the memory, but more passages about the same effect outrank it than the budget holds.
    const echoes = Array.from({ length: 14 }, (_, k) => ({
      id: `f${f}-echo${k}`,
      text: `${e.passage} ${['in the end', 'at last', 'again', 'that spring', 'with help', 'quickly', 'slowly'][k % 7]}, ${c.passage.toLowerCase().replace(/^my /, 'and my ')} too.`,
      at: day(1 + (k % 8)),
    }));
    add('control-link-beyond-budget', [pe(2)], [pc(3), { ...pl(6), text: link }, ...echoes], {
      valid: true,
      citationsIncomplete: true,
    });
  }
  return cases;
}
