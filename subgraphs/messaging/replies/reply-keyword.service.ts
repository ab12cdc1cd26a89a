import type { OrganizationService } from '../organizations/organization.service';
import { replyKeywordTable } from './keywords';

export interface ReplyKeywordSet {
  language: string;
  optOut: string[];
  optIn: string[];
  help: string[];
}

/**
 * The tenant's reply keywords (admins): the words in force per language, built-in and the tenant's own, and the
 * tenant admin's change of its own words of one language. Kept in the organisation's settings (`replyKeywords`),
 * so a change is validated (clashes refused) and logged as an organisation change.
 */
export class ReplyKeywordService {
  constructor(private readonly organizations: OrganizationService) {}

  async inForce(): Promise<ReplyKeywordSet[]> {
    const settings = await this.organizations.ownSettings('manageReplyKeywords');
    return inForce(settings.replyKeywords);
  }

  /** Replaces the tenant's own words of one language (all three lists empty: removes them); the built-in words stay. */
  async set(language: string, words: { optOut?: string[] | null; optIn?: string[] | null; help?: string[] | null }, reason?: string | null) {
    const own = { optOut: words.optOut ?? [], optIn: words.optIn ?? [], help: words.help ?? [] };
    const empty = own.optOut.length + own.optIn.length + own.help.length === 0;
    const settings = await this.organizations.updateOwnSettings(
      'manageReplyKeywords',
      (current) => {
        const rest = Object.fromEntries(Object.entries(current.replyKeywords ?? {}).filter(([key]) => key !== language));
        return { ...current, replyKeywords: empty ? rest : { ...rest, [language]: own } };
      },
      reason,
    );
    return inForce(settings.replyKeywords);
  }
}

function inForce(extra: Parameters<typeof replyKeywordTable>[0]): ReplyKeywordSet[] {
  return Object.entries(replyKeywordTable(extra))
    .map(([language, sets]) => ({ language, ...sets }))
    .sort((a, b) => (a.language === 'en' ? -1 : b.language === 'en' ? 1 : a.language.localeCompare(b.language)));
}
