/**
 * The message lifecycle (docs/messaging.md): scheduled → queued → sending → sent → delivered,
 * or → failed from any non-final state, and scheduled | queued → cancelled. Statuses only move forward; anything
 * that arrives for a later-or-equal state already reached (a duplicate or late
 * provider callback, a retried job) changes nothing.
 */
export const MESSAGE_STATUSES = ['scheduled', 'queued', 'sending', 'sent', 'delivered', 'failed', 'cancelled'] as const;
export type MessageStatus = (typeof MESSAGE_STATUSES)[number];

const RANK: Record<MessageStatus, number> = { scheduled: 0, queued: 1, sending: 2, sent: 3, delivered: 4, failed: 4, cancelled: 4 };

export function isMessageStatus(value: unknown): value is MessageStatus {
  return typeof value === 'string' && (MESSAGE_STATUSES as readonly string[]).includes(value);
}

export function isFinal(status: MessageStatus): boolean {
  return status === 'delivered' || status === 'failed' || status === 'cancelled';
}

/** A message can be taken back until a worker has claimed it. */
export function isCancellable(status: string): boolean {
  return status === 'scheduled' || status === 'queued';
}

/**
 * The statuses to record, in order, to move a message from `current` to
 * `target`; empty when the move would go backwards or nowhere. A provider that
 * reports `delivered` while we still have `sending` (its callback overtook our
 * own bookkeeping) gets the skipped `sent` filled in, so every delivered
 * message has a `sent` in its history and one `message.sent` event.
 */
export function planTransition(current: MessageStatus, target: MessageStatus): MessageStatus[] {
  if (isFinal(current) || RANK[target] <= RANK[current]) return [];
  if (target === 'failed') return ['failed'];
  if (target === 'cancelled') return isCancellable(current) ? ['cancelled'] : [];
  const path: MessageStatus[] = [];
  for (const status of ['queued', 'sending', 'sent', 'delivered'] as const) {
    if (RANK[status] > RANK[current] && RANK[status] <= RANK[target]) path.push(status);
  }
  // A message never went out if it fails before `sending`; one that is
  // delivered must have been sent, but `sending` itself is ours to record only.
  return path.filter((status) => status !== 'sending' || target === 'sending');
}
