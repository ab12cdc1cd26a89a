import { planTransition, isFinal, MESSAGE_STATUSES } from './status';

describe('message status state machine', () => {
  it('moves forward one step at a time', () => {
    expect(planTransition('queued', 'sending')).toEqual(['sending']);
    expect(planTransition('sending', 'sent')).toEqual(['sent']);
    expect(planTransition('sent', 'delivered')).toEqual(['delivered']);
  });

  it('fails from every non-final state', () => {
    expect(planTransition('queued', 'failed')).toEqual(['failed']);
    expect(planTransition('sending', 'failed')).toEqual(['failed']);
    expect(planTransition('sent', 'failed')).toEqual(['failed']);
  });

  it('fills in sent when a delivery report overtakes it', () => {
    expect(planTransition('sending', 'delivered')).toEqual(['sent', 'delivered']);
    expect(planTransition('queued', 'sent')).toEqual(['sent']);
  });

  it('[MSG-002] never moves backwards or repeats a status (duplicate and late callbacks)', () => {
    expect(planTransition('sent', 'sent')).toEqual([]);
    expect(planTransition('sent', 'sending')).toEqual([]);
    expect(planTransition('sent', 'queued')).toEqual([]);
    expect(planTransition('sending', 'queued')).toEqual([]);
  });

  it('[MSG-002] releases a scheduled message into queued, and cancels only before a worker claimed it', () => {
    expect(planTransition('scheduled', 'queued')).toEqual(['queued']);
    expect(planTransition('scheduled', 'failed')).toEqual(['failed']);
    expect(planTransition('scheduled', 'cancelled')).toEqual(['cancelled']);
    expect(planTransition('queued', 'cancelled')).toEqual(['cancelled']);
    for (const later of ['sending', 'sent', 'delivered', 'failed'] as const) expect(planTransition(later, 'cancelled')).toEqual([]);
    expect(planTransition('queued', 'scheduled')).toEqual([]);
  });

  it('treats delivered, failed and cancelled as final', () => {
    for (const target of MESSAGE_STATUSES) {
      expect(planTransition('delivered', target)).toEqual([]);
      expect(planTransition('failed', target)).toEqual([]);
      expect(planTransition('cancelled', target)).toEqual([]);
    }
    expect(isFinal('delivered') && isFinal('failed') && isFinal('cancelled')).toBe(true);
    expect(isFinal('sent')).toBe(false);
  });
});
