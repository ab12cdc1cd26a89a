import { withoutQuotedValues } from './tenant-activity';

describe('error messages kept for the support desk', () => {
  it('leave out every quoted id or value and keep the wording', () => {
    expect(withoutQuotedValues("EHR 'ehr-p-1001' was not found")).toBe("EHR '…' was not found");
    expect(withoutQuotedValues('Variable "date" got "2026-13-01", not a date; see `docs`')).toBe("Variable '…' got '…', not a date; see '…'");
    expect(withoutQuotedValues('Not allowed: role support reaches no patient records')).toBe('Not allowed: role support reaches no patient records');
  });
});
