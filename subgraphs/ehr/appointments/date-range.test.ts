import { AppError } from '../../../common/errors';
import { parseDateRange } from './date-range';

const now = new Date('2026-11-22T15:00:00Z');

describe('parseDateRange', () => {
  it('defaults to today .. today+7d inclusive', () => {
    const range = parseDateRange(undefined, undefined, now);
    expect(range.from.toISOString()).toBe('2026-11-22T00:00:00.000Z');
    expect(range.until.toISOString()).toBe('2026-11-30T00:00:00.000Z');
  });

  it('treats dates as whole UTC days and accepts timestamps', () => {
    expect(parseDateRange('2026-11-23', '2026-11-23', now).until.toISOString()).toBe('2026-11-24T00:00:00.000Z');
    const range = parseDateRange('2026-11-23T08:00:00Z', '2026-11-23T10:00:00+01:00', now);
    expect(range.until.toISOString()).toBe('2026-11-23T09:00:00.000Z');
  });

  it.each([
    ['2026-11-24', '2026-11-23'],
    ['2026-02-30', undefined],
    ['yesterday', undefined],
    ['2026-01-01', '2027-01-03'],
    ['2026-11-23T08:00:00', undefined],
  ])('rejects from=%s to=%s', (from, to) => {
    expect(() => parseDateRange(from, to, now)).toThrow(AppError);
  });
});
