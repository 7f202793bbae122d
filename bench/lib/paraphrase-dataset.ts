/**
 * Paraphrased questions over per-person facts: each person holds one fact of every family, and each question
 * asks for one of them in words the fact does not use ("how can we reach Ana?" for "Ana prefers e-mail").
 * The person's name is the only word they share on purpose, so BM25 finds the person and must guess the fact.
 * Hand-written templates, deterministic by seed: a sanity check of the embedder, not a public benchmark.
 */
import { rng } from './substrate-measure.js';

export interface ParaphraseFact {
  id: string;
  person: string;
  family: string;
  content: string;
}

export interface ParaphraseQuery {
  text: string;
  answer: string;
}

interface Family {
  name: string;
  facts: ((who: string, pick: <T>(xs: readonly T[]) => T) => string)[];
  questions: ((who: string) => string)[];
}

const CITIES = ['Porto', 'Braga', 'Lyon', 'Graz', 'Turin', 'Ghent', 'Malmo', 'Cork', 'Bilbao', 'Utrecht'] as const;
const COMPANIES = ['Acme', 'Globex', 'Initech', 'Umbrella', 'Hooli', 'Vandelay'] as const;
const JOBS = ['an engineer', 'a nurse', 'an accountant', 'a teacher', 'a pharmacist', 'a carpenter'] as const;
const LANGUAGES = ['Portuguese', 'German', 'Italian', 'Dutch', 'Swedish', 'Basque'] as const;
const MONTHS = ['January', 'March', 'May', 'July', 'September', 'November'] as const;
const DRUGS = ['penicillin', 'aspirin', 'ibuprofen', 'codeine'] as const;
const DAYS = ['Monday', 'Tuesday', 'Thursday', 'Friday'] as const;

const FAMILIES: Family[] = [
  {
    name: 'contact',
    facts: [
      (w) => `${w} prefers e-mail; no phone calls before noon.`,
      (w) => `${w} only answers messages sent by post.`,
      (w) => `${w} likes text messages rather than e-mail.`,
    ],
    questions: [(w) => `how does ${w} want to be contacted?`, (w) => `what is the best way to reach ${w}?`],
  },
  {
    name: 'home',
    facts: [(w, p) => `${w} lives in ${p(CITIES)}.`, (w, p) => `${w} moved to a flat in ${p(CITIES)} last year.`],
    questions: [(w) => `which city is ${w}'s residence?`, (w) => `where is ${w} based these days?`],
  },
  {
    name: 'work',
    facts: [(w, p) => `${w} works as ${p(JOBS)} at ${p(COMPANIES)}.`, (w, p) => `${w} is employed by ${p(COMPANIES)}.`],
    questions: [(w) => `what does ${w} do for a living?`, (w) => `who is ${w}'s employer?`],
  },
  {
    name: 'diet',
    facts: [
      (w) => `${w} is vegetarian and never eats meat.`,
      (w) => `${w} follows a strict gluten-free diet.`,
      (w) => `${w} is vegan.`,
    ],
    questions: [(w) => `what food restrictions does ${w} have?`, (w) => `what should we avoid serving ${w} at lunch?`],
  },
  {
    name: 'birthday',
    facts: [
      (w, p) => `${w} was born on the 3rd of ${p(MONTHS)} 1990.`,
      (w, p) => `${w} celebrates turning forty in ${p(MONTHS)}.`,
    ],
    questions: [(w) => `when is ${w}'s birthday?`, (w) => `how old is ${w}?`],
  },
  {
    name: 'language',
    facts: [
      (w, p) => `${w} speaks ${p(LANGUAGES)} and some French.`,
      (w, p) => `${w} is a native ${p(LANGUAGES)} speaker.`,
    ],
    questions: [(w) => `which languages is ${w} fluent in?`, (w) => `can we talk to ${w} in their mother tongue?`],
  },
  {
    name: 'pets',
    facts: [(w) => `${w} has two cats at home.`, (w) => `${w} walks a large dog every morning.`],
    questions: [(w) => `does ${w} own any animals?`, (w) => `is ${w} a pet owner?`],
  },
  {
    name: 'billing',
    facts: [(w) => `${w} wants a single monthly invoice.`, (w) => `${w} pays each order by credit card upfront.`],
    questions: [(w) => `how should we charge ${w}?`, (w) => `what payment arrangement suits ${w}?`],
  },
  {
    name: 'allergy',
    facts: [
      (w, p) => `${w} is allergic to ${p(DRUGS)}.`,
      (w, p) => `${w} had a severe reaction to ${p(DRUGS)} in 2019.`,
    ],
    questions: [(w) => `which medicine must ${w} not be given?`, (w) => `does ${w} have any drug intolerance?`],
  },
  {
    name: 'travel',
    facts: [
      (w, p) => `${w} flies to ${p(CITIES)} next ${p(DAYS)}.`,
      (w, p) => `${w} takes the train to ${p(CITIES)} on ${p(DAYS)}.`,
    ],
    questions: [(w) => `when is ${w}'s next trip?`, (w) => `is ${w} going away soon?`],
  },
];

const NAMES = [
  'Ana',
  'Ben',
  'Carla',
  'Dario',
  'Elena',
  'Farid',
  'Greta',
  'Hugo',
  'Ines',
  'Jonas',
  'Karin',
  'Luca',
  'Marta',
  'Nils',
  'Olga',
  'Pavel',
  'Quentin',
  'Rosa',
  'Sven',
  'Tereza',
  'Ugo',
  'Vera',
  'Wim',
  'Xenia',
  'Yusuf',
  'Zora',
];

const SURNAMES = ['Silva', 'Weber', 'Rossi', 'Novak', 'Jansen', 'Moreau', 'Lindqvist', 'Kowalski', 'Byrne', 'Ortega'];

export function paraphraseDataset(people: number, seed = 7): { facts: ParaphraseFact[]; queries: ParaphraseQuery[] } {
  const random = rng(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)]!;
  const facts: ParaphraseFact[] = [];
  const queries: ParaphraseQuery[] = [];
  for (let p = 0; p < people; p++) {
    // Names repeat past 26 people: a surname keeps each person distinct, as in a real customer base.
    const person = `${NAMES[p % NAMES.length]} ${SURNAMES[Math.floor(p / NAMES.length) % SURNAMES.length]}`;
    for (const family of FAMILIES) {
      const id = `mem_p${p}_${family.name}`;
      facts.push({ id, person, family: family.name, content: pick(family.facts)(person, pick) });
      queries.push({ text: pick(family.questions)(person), answer: id });
    }
  }
  return { facts, queries };
}
