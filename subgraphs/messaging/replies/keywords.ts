import type { ErrorDetail } from '../../../common/errors';

export type ReplyAction = 'confirm' | 'cancel' | 'stop' | 'start' | 'help';

/** What a language's keywords do: turn sms off, turn it on again, or ask for the help reply. */
const KEYWORD_ACTIONS = ['optOut', 'optIn', 'help'] as const;
type KeywordAction = (typeof KEYWORD_ACTIONS)[number];

/** Words per action of one language; a tenant's own words (organisation setting `replyKeywords`) have this shape per language. */
type KeywordSets = Partial<Record<KeywordAction, readonly string[]>>;
export type ReplyKeywords = Readonly<Record<string, KeywordSets>>;

const ACTION_OF: Record<KeywordAction, ReplyAction> = { optOut: 'stop', optIn: 'start', help: 'help' };
const ACTION_NAMES: Record<KeywordAction, string> = { optOut: 'an opt-out', optIn: 'an opt-in', help: 'a help' };

/**
 * The built-in keywords per language (docs/messaging.md#replies-and-keywords). A patient's reply is matched
 * against English and the words of their `preferences.language`, never another language's.
 */
const BUILT_IN_KEYWORDS = {
  en: { optOut: ['STOP', 'STOPALL', 'UNSUBSCRIBE', 'END', 'QUIT', 'REVOKE', 'OPTOUT'], optIn: ['START', 'UNSTOP'], help: ['HELP', 'INFO'] },
  nl: { optOut: ['AFMELDEN'], optIn: ['AANMELDEN'], help: ['HULP'] },
  de: { optOut: ['STOPP', 'ABMELDEN'], optIn: ['ANMELDEN'], help: ['HILFE'] },
  fr: { optOut: ['ARRET', 'DESABONNER'], optIn: ['REPRENDRE'], help: ['AIDE'] },
  es: { optOut: ['BAJA', 'PARAR'], optIn: ['ALTA'], help: ['AYUDA'] },
} as const satisfies Record<string, Record<KeywordAction, readonly string[]>>;

/** The words of a reply to an appointment reminder (docs/api.md §5), English only; on a reminder they come first. */
const REMINDER_WORDS: Readonly<Record<string, ReplyAction>> = { C: 'confirm', YES: 'confirm', CONFIRM: 'confirm', X: 'cancel', CANCEL: 'cancel' };

const MAX_WORD = 32;
const MAX_WORDS = 20;
const LANGUAGE_KEY = /^[a-z]{2,3}$/;
const WORD = /^[\p{L}\p{N}]+$/u;

/** A reply as keywords are compared: trimmed, accents removed, upper case (`' arrêt '` → `ARRET`). */
function normalizeKeyword(text: string): string {
  return text.normalize('NFD').replace(/\p{M}/gu, '').trim().toUpperCase();
}

/** The keyword language of a preference language: its primary subtag (`nl-BE` → `nl`). */
function keywordLanguage(language: string): string {
  return language.split('-')[0].toLowerCase();
}

/** Every language's words, built-in then the tenant's own, normalised, per action. */
export function replyKeywordTable(extra: ReplyKeywords = {}): Record<string, Record<KeywordAction, string[]>> {
  const languages = [...new Set([...Object.keys(BUILT_IN_KEYWORDS), ...Object.keys(extra)])];
  return Object.fromEntries(
    languages.map((language) => {
      const builtIn: KeywordSets = (BUILT_IN_KEYWORDS as Record<string, KeywordSets>)[language] ?? {};
      const own = extra[language] ?? {};
      const words = (action: KeywordAction) => [...new Set([...(builtIn[action] ?? []), ...(own[action] ?? []).map(normalizeKeyword)])];
      return [language, { optOut: words('optOut'), optIn: words('optIn'), help: words('help') }];
    }),
  );
}

/** Word → action for a patient of `language`: English and that language, built-in and the tenant's. */
function wordsFor(language: string, extra: ReplyKeywords): Map<string, ReplyAction> {
  const table = replyKeywordTable(extra);
  const words = new Map<string, ReplyAction>();
  for (const sets of new Set([table.en, table[keywordLanguage(language)]])) {
    if (!sets) continue;
    for (const action of KEYWORD_ACTIONS) for (const word of sets[action]) words.set(word, ACTION_OF[action]);
  }
  return words;
}

export interface KeywordOptions {
  /** The patient's `preferences.language` (default `en`). */
  language?: string;
  /** Whether the reply answers an appointment reminder: then C/YES/CONFIRM/X/CANCEL win over every other word. */
  toReminder?: boolean;
  /** The tenant's own words (organisation setting `replyKeywords`). */
  extra?: ReplyKeywords;
}

/**
 * The keyword a reply is, if it is one: the whole reply, matched case- and accent-insensitively. On a reply to a
 * reminder the reminder words come first; otherwise the patient's opt-out, opt-in and help words do, and a
 * reminder word that is none of those still reads as confirm/cancel (which the reply service then ignores).
 * Anything else is free text (null).
 */
export function parseKeyword(body: string, options: KeywordOptions = {}): { keyword: string; action: ReplyAction } | null {
  const keyword = normalizeKeyword(body);
  if (keyword === '') return null;
  const reminder = Object.hasOwn(REMINDER_WORDS, keyword) ? REMINDER_WORDS[keyword] : undefined;
  if (reminder && options.toReminder) return { keyword, action: reminder };
  const action = wordsFor(options.language ?? 'en', options.extra ?? {}).get(keyword) ?? reminder;
  return action ? { keyword, action } : null;
}

/**
 * Checks a tenant's `replyKeywords` setting: `{<language>: {optOut?, optIn?, help?: string[]}}`, each word one
 * run of letters and digits (at most 32, 20 per action), and no word doing two things for a patient of that
 * language (English included, built-in words too). Returns one detail per problem (empty: valid).
 */
export function validateReplyKeywords(value: unknown): ErrorDetail[] {
  const details: ErrorDetail[] = [];
  const at = (...path: string[]) => ['replyKeywords', ...path].join('.');
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return [{ path: at(), message: 'must be an object of languages' }];
  for (const [language, sets] of Object.entries(value as Record<string, unknown>)) {
    if (!LANGUAGE_KEY.test(language)) {
      details.push({ path: at(language), message: "must be a two- or three-letter language code such as 'nl'" });
      continue;
    }
    if (typeof sets !== 'object' || sets === null || Array.isArray(sets)) {
      details.push({ path: at(language), message: 'must be an object of optOut, optIn, help' });
      continue;
    }
    for (const [action, words] of Object.entries(sets as Record<string, unknown>)) {
      if (!(KEYWORD_ACTIONS as readonly string[]).includes(action)) details.push({ path: at(language, action), message: 'unknown field' });
      else if (!Array.isArray(words) || words.length > MAX_WORDS)
        details.push({ path: at(language, action), message: `must be a list of at most ${MAX_WORDS} words` });
      else if (words.some((word) => typeof word !== 'string' || word.length > MAX_WORD || !WORD.test(word.trim())))
        details.push({ path: at(language, action), message: `each word is one run of letters or digits, at most ${MAX_WORD} characters` });
    }
  }
  if (details.length > 0) return details;
  // Every language a patient may be matched in (English with each other language): a tenant's word clashes when
  // the same word does something else there; the built-in words never clash among themselves.
  const extra = value as ReplyKeywords;
  const table = replyKeywordTable(extra);
  for (const language of Object.keys(table)) {
    const entries: { word: string; action: KeywordAction; own?: string }[] = [];
    for (const lang of new Set(['en', language])) {
      const builtIn: KeywordSets = (BUILT_IN_KEYWORDS as Record<string, KeywordSets>)[lang] ?? {};
      for (const action of KEYWORD_ACTIONS) {
        for (const word of builtIn[action] ?? []) entries.push({ word, action });
        for (const word of extra[lang]?.[action] ?? []) entries.push({ word: normalizeKeyword(word), action, own: at(lang, action) });
      }
    }
    for (const entry of entries) {
      const other = entries.find((e) => e.word === entry.word && e.action !== entry.action);
      if (entry.own && other) details.push({ path: entry.own, message: `'${entry.word}' is already ${ACTION_NAMES[other.action]} word` });
    }
  }
  return [...new Map(details.map((d) => [`${d.path} ${d.message}`, d])).values()];
}

/**
 * The automatic answer to a help keyword, per language: who sends these messages and how to stop them (and start
 * them again). `{{sender}}` is the organisation's name. A language without its own text gets the English one.
 */
const HELP_REPLIES: Readonly<Record<keyof typeof BUILT_IN_KEYWORDS, string>> = {
  en: '{{sender}}: this is an automatic message. Reply STOP to receive no more text messages from us, or START to receive them again.',
  nl: "{{sender}}: dit is een automatisch bericht. Antwoord AFMELDEN om geen sms'jes meer van ons te ontvangen, of AANMELDEN om ze weer te ontvangen.",
  de: '{{sender}}: Dies ist eine automatische Nachricht. Antworten Sie ABMELDEN, um keine SMS mehr von uns zu erhalten, oder ANMELDEN, um sie wieder zu erhalten.',
  fr: '{{sender}} : ceci est un message automatique. Répondez ARRET pour ne plus recevoir nos SMS, ou REPRENDRE pour les recevoir à nouveau.',
  es: '{{sender}}: este es un mensaje automático. Responda BAJA para dejar de recibir nuestros SMS, o ALTA para volver a recibirlos.',
};

/** The help reply for a patient of `language`, naming `sender`, and the language it is written in. */
export function helpReply(language: string, sender: string): { language: string; body: string } {
  const own = keywordLanguage(language);
  const chosen = Object.hasOwn(HELP_REPLIES, own) ? (own as keyof typeof HELP_REPLIES) : 'en';
  return { language: chosen, body: HELP_REPLIES[chosen].replace('{{sender}}', () => sender) };
}
