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

  it('never moves backwards or repeats a status (duplicate and late callbacks)', () => {
    expect(planTransition('sent', 'sent')).toEqual([]);
    expect(planTransition('sent', 'sending')).toEqual([]);
    expect(planTransition('sent', 'queued')).toEqual([]);
    expect(planTransition('sending', 'queued')).toEqual([]);
  });

  it('treats delivered and failed as final', () => {
    for (const target of MESSAGE_STATUSES) {
      expect(planTransition('delivered', target)).toEqual([]);
      expect(planTransition('failed', target)).toEqual([]);
    }
    expect(isFinal('delivered') && isFinal('failed')).toBe(true);
    expect(isFinal('sent')).toBe(false);
  });
});
