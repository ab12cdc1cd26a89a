import { gql } from '../api';
import { fill, h, table } from '../dom';
import { heading, type PageContext } from '../page';
import type { Template } from '../types';

const TEMPLATE_FIELDS = 'id version name channel language subject body variables { name type required }';

/** The tenant's message templates, read-only. */
export async function templatesPage(ctx: PageContext): Promise<void> {
  const { templates } = await gql<{ templates: { data: Template[] } }>(`query { templates { data { ${TEMPLATE_FIELDS} } } }`);
  if (!ctx.active()) return;
  fill(
    ctx.main,
    heading('Templates'),
    h('p', { class: 'lead' }, 'Message templates of this tenant (read-only). ', h('code', null, '{{name}}'), ' inserts a variable.'),
    templates.data.length === 0
      ? h('p', null, 'No templates.')
      : templates.data.map((t) =>
          h(
            'article',
            { class: 'card', 'aria-labelledby': `tpl-${t.id}-${t.language}` },
            h('h2', { id: `tpl-${t.id}-${t.language}` }, t.name),
            h(
              'dl',
              { class: 'facts' },
              h('dt', null, 'Id'),
              h('dd', null, h('code', null, t.id)),
              h('dt', null, 'Channel · language · version'),
              h('dd', null, `${t.channel} · ${t.language} · v${t.version}`),
              t.subject ? [h('dt', null, 'Subject'), h('dd', null, t.subject)] : null,
            ),
            t.variables.length === 0
              ? h('p', null, 'No variables.')
              : table(
                  `Variables of ${t.name}`,
                  [
                    { label: 'Name', cell: (v) => h('code', null, v.name) },
                    { label: 'Type', cell: (v) => v.type },
                    { label: 'Required', cell: (v) => (v.required ? 'yes' : 'no') },
                  ],
                  t.variables,
                ),
            h('pre', { class: 'payload', tabindex: '0', 'aria-label': `Body of ${t.name}` }, t.body),
          ),
        ),
  );
}
