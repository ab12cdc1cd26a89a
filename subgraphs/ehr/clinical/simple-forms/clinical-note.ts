import type { Flat } from '../opt/flat';
import { entry, envelope, putCoded, slot, textOf, type SimpleForm } from './shared';

/** The simple form's own constraints (title, LOINC note type, body length): the note as CareGraph documented it. */
const NOTE = 'openEHR-EHR-EVALUATION.clinical_note.v1';
const ROOT = 'clinical_note';
/** The report's other_context elements the template names "Title" and "Document type". */
const TITLE = `${ROOT}/context/title`;
const DOCUMENT_TYPE = `${ROOT}/context/document_type`;
const SYNOPSIS = `${ROOT}/clinical_synopsis`;
/** How the writing user is identified as composer: a CareGraph user id (a named author has a name only). */
export const USER_ID_SCHEME = 'caregraph-user';
const USER_NAMESPACE = 'caregraph';

/**
 * The RM's composer is the party responsible for the content, not the one
 * who typed it in (that is the version's committer): a note's author, when
 * named, is its composer; otherwise the writing user is, identified by id so
 * that reading it back does not mistake the user for a named author.
 */
function composerOf(author: string | undefined, user: string): Flat {
  if (author !== undefined) return { [`${ROOT}/composer|name`]: author };
  return {
    [`${ROOT}/composer|name`]: user,
    [`${ROOT}/composer|id`]: user,
    [`${ROOT}/composer|id_scheme`]: USER_ID_SCHEME,
    [`${ROOT}/composer|id_namespace`]: USER_NAMESPACE,
  };
}

export const clinicalNote: SimpleForm = {
  root: ROOT,
  definition: { type: 'object', children: { note: slot(NOTE) } },
  toFlat(c, composer) {
    const note = c.note as { title: string; note_type: { code: string }; authored_at: string; author?: string; body: string };
    const flat: Flat = { ...envelope(ROOT, composer, note.authored_at), ...composerOf(note.author, composer), ...entry(SYNOPSIS) };
    flat[TITLE] = note.title;
    putCoded(flat, DOCUMENT_TYPE, 'LOINC', note.note_type.code, textOf(NOTE, 'note_type', note.note_type.code)!);
    flat[`${SYNOPSIS}/synopsis`] = note.body;
    return flat;
  },
  fromFlat(flat) {
    const byUser = flat[`${ROOT}/composer|id_scheme`] === USER_ID_SCHEME;
    const author = flat[`${ROOT}/composer|name`];
    return {
      note: {
        title: flat[TITLE],
        note_type: { code: flat[`${DOCUMENT_TYPE}|code`], value: flat[`${DOCUMENT_TYPE}|value`] },
        authored_at: flat[`${ROOT}/context/start_time`],
        ...(!byUser && author !== undefined ? { author } : {}),
        body: flat[`${SYNOPSIS}/synopsis`],
      },
    };
  },
};
