import { parseAql } from './parser';

describe('AQL parser: errors', () => {
  it('answers a syntax error with its line and column', () => {
    const bad = () => parseAql('SELECT c/uid/value\nFROM COMPOSITION c\nWHERE c/uid/value = ');
    expect(bad).toThrow(
      expect.objectContaining({ code: 'VALIDATION_ERROR', message: expect.stringMatching(/^AQL syntax error at line 3, column 21: Expected/) }),
    );
    try {
      bad();
    } catch (err) {
      expect((err as { details: unknown[] }).details).toEqual([expect.objectContaining({ path: 'q', line: 3, column: 21 })]);
    }
    expect(() => parseAql("SELECT c FROM COMPOSITION c WHERE c/uid/value = 'open")).toThrow(/line 1, column 54: Expected/);
    expect(() => parseAql('SELECT c FROM COMPOSITION c LIMIT x')).toThrow(/line 1, column 35: Expected a whole number/);
    expect(() => parseAql('SELECT FROM COMPOSITION c')).toThrow(/line 1, column 13/);
    expect(() => parseAql('SELECT c FROM composition c')).toThrow(/line 1, column 15/);
  });

  it('refuses TOP with LIMIT', () => {
    expect(() => parseAql('SELECT TOP 1 c FROM COMPOSITION c LIMIT 1')).toThrow('TOP and LIMIT cannot be used together');
  });

  it.each([
    ['parentheses', `${'('.repeat(4900)}c/uid/value = 'x'${')'.repeat(4900)}`],
    ['NOT', `${'NOT '.repeat(2400)}c/uid/value = 'x'`],
  ])('refuses a WHERE condition nested deeper than 64 levels (%s) with VALIDATION_ERROR', (_what, where) => {
    expect(() => parseAql(`SELECT c/uid/value FROM COMPOSITION c WHERE ${where}`)).toThrow(
      expect.objectContaining({ code: 'VALIDATION_ERROR', message: 'AQL: the WHERE condition nests deeper than 64 levels' }),
    );
  });

  it('accepts 64 nested parentheses, refuses 65', () => {
    const where = (n: number) => `SELECT c/uid/value FROM COMPOSITION c WHERE ${'('.repeat(n)}c/uid/value = 'x'${')'.repeat(n)}`;
    expect(parseAql(where(64)).where?.kind).toBe('compare');
    expect(() => parseAql(where(65))).toThrow('nests deeper than 64 levels');
  });

  it('refuses a query longer than 10000 characters', () => {
    expect(() => parseAql(`SELECT c FROM COMPOSITION c WHERE c/a = '${'x'.repeat(10_000)}'`)).toThrow('longer than 10000');
  });
});
