import { helpReply, parseKeyword, replyKeywordTable, validateReplyKeywords } from './keywords';

describe('reply keywords', () => {
  it.each([
    ['C', 'confirm'],
    [' yes ', 'confirm'],
    ['Confirm\n', 'confirm'],
    ['x', 'cancel'],
    ['CANCEL', 'cancel'],
    ['stop', 'stop'],
    ['  Start', 'start'],
    ['help', 'help'],
    ['Info', 'help'],
  ])('%j → %s', (body, action) => {
    expect(parseKeyword(body)?.action).toBe(action);
  });

  it.each(['', 'C please', 'yes!', 'STOPP', 'can cel', 'AFMELDEN', 'ayuda'])('%j is free text for an English patient', (body) => {
    expect(parseKeyword(body)).toBeNull();
  });

  it.each([
    ['nl', 'afmelden', 'stop'],
    ['nl', 'Aanmelden', 'start'],
    ['nl', 'HULP', 'help'],
    ['de', 'stopp', 'stop'],
    ['de', 'Abmelden', 'stop'],
    ['de', 'anmelden', 'start'],
    ['de', 'hilfe', 'help'],
    ['fr', 'arrêt', 'stop'],
    ['fr', 'ARRET', 'stop'],
    ['fr', 'Désabonner', 'stop'],
    ['fr', 'reprendre', 'start'],
    ['fr', 'aide', 'help'],
    ['es', 'baja', 'stop'],
    ['es', 'Parar', 'stop'],
    ['es', 'alta', 'start'],
    ['es', 'AYÚDA', 'help'],
  ])('%s: %j → %s', (language, body, action) => {
    expect(parseKeyword(body, { language })?.action).toBe(action);
  });

  it('names the keyword without accents, in upper case', () => {
    expect(parseKeyword(' désabonner ', { language: 'fr' })).toEqual({ keyword: 'DESABONNER', action: 'stop' });
  });

  it.each(['STOP', 'unsubscribe', 'START', 'help', 'C', 'cancel'])('keeps the English word %j for a Dutch patient', (body) => {
    expect(parseKeyword(body, { language: 'nl' })).not.toBeNull();
  });

  it("reads a regional tag by its language ('nl-BE' as 'nl')", () => {
    expect(parseKeyword('afmelden', { language: 'nl-BE' })?.action).toBe('stop');
  });

  it("does not take another language's words (a German word from a Dutch patient is free text)", () => {
    expect(parseKeyword('STOPP', { language: 'nl' })).toBeNull();
    expect(parseKeyword('BAJA', { language: 'fr' })).toBeNull();
  });

  it('knows only English for a language without words of its own', () => {
    expect(parseKeyword('STOP', { language: 'pt' })?.action).toBe('stop');
    expect(parseKeyword('AFMELDEN', { language: 'pt' })).toBeNull();
  });

  describe("a tenant's own words", () => {
    const extra = { nl: { optOut: ['uitschrijven'] }, en: { optOut: ['cancel'], help: ['support'] }, it: { optOut: ['basta'], help: ['aiuto'] } };

    it('add to the language they are given for', () => {
      expect(parseKeyword('Uitschrijven', { language: 'nl', extra })?.action).toBe('stop');
      expect(parseKeyword('UITSCHRIJVEN', { language: 'de', extra })).toBeNull();
      expect(parseKeyword('basta', { language: 'it', extra })?.action).toBe('stop');
      expect(parseKeyword('SUPPORT', { language: 'fr', extra })?.action).toBe('help');
    });

    it('never outrank the reminder words on a reply to a reminder', () => {
      expect(parseKeyword('CANCEL', { extra, toReminder: true })?.action).toBe('cancel');
      expect(parseKeyword('CANCEL', { extra })?.action).toBe('stop');
    });

    it('are listed beside the built-in ones', () => {
      const table = replyKeywordTable(extra);
      expect(table.nl.optOut).toEqual(['AFMELDEN', 'UITSCHRIJVEN']);
      expect(table.it).toEqual({ optOut: ['BASTA'], optIn: [], help: ['AIUTO'] });
    });

    it.each([
      [{ nl: { optOut: ['START'] } }, 'replyKeywords.nl.optOut'],
      [{ en: { optIn: ['AFMELDEN'] } }, 'replyKeywords.en.optIn'],
      [{ de: { optOut: ['two words'] } }, 'replyKeywords.de.optOut'],
      [{ de: { help: [''] } }, 'replyKeywords.de.help'],
      [{ xx_1: { help: ['HI'] } }, 'replyKeywords.xx_1'],
      [{ fr: { optIn: ['ENCORE'], help: ['encore'] } }, 'replyKeywords.fr.help'],
    ])('refuses %j (%s)', (value, path) => {
      const details = validateReplyKeywords(value);
      expect(details.map((d) => d.path)).toContain(path);
    });

    it('accepts words that clash with nothing', () => {
      expect(validateReplyKeywords(extra)).toEqual([]);
    });
  });
});

describe('help reply', () => {
  it.each([
    ['en', 'Clinic Amstel: this is an automatic message. Reply STOP'],
    ['nl-BE', 'Clinic Amstel: dit is een automatisch bericht. Antwoord AFMELDEN'],
    ['de', 'Clinic Amstel: Dies ist eine automatische Nachricht. Antworten Sie ABMELDEN'],
    ['fr', 'Clinic Amstel : ceci est un message automatique. Répondez ARRET'],
    ['es', 'Clinic Amstel: este es un mensaje automático. Responda BAJA'],
    ['pt', 'Clinic Amstel: this is an automatic message.'],
  ])('%s names the sender and how to opt out', (language, start) => {
    expect(helpReply(language, 'Clinic Amstel').body.startsWith(start)).toBe(true);
  });

  it('inserts the name as it is', () => {
    expect(helpReply('en', 'A $& B').body.startsWith('A $& B:')).toBe(true);
  });
});
