export type ReplyAction = 'confirm' | 'cancel' | 'stop' | 'start';

const KEYWORDS: Record<string, ReplyAction> = {
  C: 'confirm',
  YES: 'confirm',
  CONFIRM: 'confirm',
  X: 'cancel',
  CANCEL: 'cancel',
  STOP: 'stop',
  START: 'start',
};

/** docs/api.md §5 reply keywords: the whole reply, trimmed, case-insensitive. Anything else is free text. */
export function parseKeyword(body: string): { keyword: string; action: ReplyAction } | null {
  const keyword = body.trim().toUpperCase();
  const action = KEYWORDS[keyword];
  return action ? { keyword, action } : null;
}
