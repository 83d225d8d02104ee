// A template's form, with a preview of its unsaved fields that follows typing: the HTML part in a sandboxed
// frame of its own, the text part as text, sample vars filled in.
import type { Context } from 'hono';
import { z } from 'zod';
import { Csrf, PreviewButton } from '../../dashboard/views/layout';
import { SCRIPT_PATH } from '../../dashboard/views/script';
import { fillTemplate, missingVars, type TemplateVars } from '../../mail/template';
import type { Template } from '../../store/account/templates';
import { PREVIEW_HEADERS } from './email';
import { formFields, type PageEnv } from './page';

/** Sample vars as typed: one `name=value` per line (a name without a value is not given). */
export function varsOf(text: string | undefined): TemplateVars {
  const vars: TemplateVars = {};
  for (const line of (text ?? '').split(/\r?\n/)) {
    const at = line.indexOf('=');
    const value = line.slice(at + 1).trim();
    if (at > 0 && value) vars[line.slice(0, at).trim()] = value;
  }
  return vars;
}

const previewForm = z.object({
  subject: z.string().optional(),
  htmlBody: z.string().optional(),
  textBody: z.string().optional(),
  vars: z.string().optional(),
});

/** The template form: its fields, sample vars, and the preview of the unsaved fields (HTML and text). */
export function TemplateForm(props: {
  template: Partial<Template>;
  action: string;
  csrf: string;
  writable: boolean;
  vars: string;
}) {
  const { template, writable } = props;
  return (
    <form class="stack template-form" method="post" action={props.action} data-live-preview>
      <Csrf token={props.csrf} />
      <label>
        Name
        <input name="name" value={template.name ?? ''} required readonly={!writable} />
      </label>
      <label>
        Subject
        <input name="subject" value={template.subject ?? ''} required readonly={!writable} />
      </label>
      <div class="editor">
        <div class="stack">
          <label>
            HTML body
            <textarea name="htmlBody" rows={12} readonly={!writable}>
              {template.htmlBody ?? ''}
            </textarea>
          </label>
          <label>
            Text body
            <textarea name="textBody" rows={6} readonly={!writable}>
              {template.textBody ?? ''}
            </textarea>
          </label>
          <label>
            Sample vars (one name=value per line)
            <textarea name="vars" rows={3}>
              {props.vars}
            </textarea>
          </label>
        </div>
        <div class="stack">
          <iframe
            tabindex={-1}
            class="preview"
            name="preview-html"
            title="Preview of the HTML body"
            sandbox=""
            src="about:blank"
          />
          <iframe
            tabindex={-1}
            class="preview text"
            name="preview-text"
            title="Preview of the text body"
            sandbox=""
            src="about:blank"
          />
        </div>
      </div>
      <div class="actions">
        {writable ? <button type="submit">Save</button> : null}
        <PreviewButton action="/dashboard/templates/preview?part=html" frame="preview-html" label="Preview HTML" />
        <PreviewButton action="/dashboard/templates/preview?part=text" frame="preview-text" label="Preview text" />
      </div>
    </form>
  );
}

export const previewScript = <script src={SCRIPT_PATH} defer />;

/**
 * The preview of unsaved fields with sample vars: the HTML part (a page of its own, sandboxed, no script) or the
 * text part, placeholders without a value left as they are.
 */
export function preview(c: Context<PageEnv>) {
  const fields = formFields(c, previewForm);
  const vars = varsOf(fields.vars);
  const kept: TemplateVars = Object.fromEntries(
    missingVars([fields.subject, fields.htmlBody, fields.textBody], vars).map((name) => [name, `{{${name}}}`]),
  );
  const all = { ...kept, ...vars };
  if (c.req.query('part') === 'text') {
    return c.text(fillTemplate(fields.textBody ?? '', all, 'plain'), 200, {
      ...PREVIEW_HEADERS,
      'Content-Type': 'text/plain; charset=utf-8',
    });
  }
  return c.html(fillTemplate(fields.htmlBody ?? '', all, 'html'), 200, PREVIEW_HEADERS);
}
