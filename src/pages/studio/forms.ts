// The studio's form controls: each with a visible label, and a place beside it where the API's complaint about that
// field is shown (studio.js puts it there). The API validates (one schema); the forms only say how a value is sent:
// `data-kind` tells studio.js to send a field as tags, USDC, a time, a number, a file's data URL, a list or a flag.
import { html, type Html } from '../html.ts'

/** How studio.js reads a control's value into the request body (see studio.js `valueOf`). */
export type Kind = 'text' | 'tags' | 'usdc' | 'time' | 'int' | 'days' | 'data-url' | 'flag' | 'list' | 'file' | 'markdown'

export interface Control {
  form: string
  /** The API's field name; a dot nests it (price.amount). */
  name: string
  label: string
  kind?: Kind
  value?: string | null
  hint?: string
  /** What an empty value sends: nothing (the default), or null (to clear it). */
  empty?: 'omit' | 'null'
  attributes?: Html
}

const idOf = (form: string, name: string) => `${form}-${name.replace(/\./g, '-')}`

function shell(c: Control, control: Html): Html {
  const id = idOf(c.form, c.name)
  return html`<div class="field" data-field="${c.name}">
<label for="${id}">${c.label}</label>
${control}
${c.hint ? html`<p class="hint" id="${id}-hint">${c.hint}</p>` : ''}<p class="field-error" id="${id}-error" hidden></p>
</div>`
}

const described = (c: Control) => {
  const id = idOf(c.form, c.name)
  return c.hint ? `${id}-hint ${id}-error` : `${id}-error`
}

/** A one-line text field (`type`: text, url, number, datetime-local). */
export const input = (c: Control, type = 'text'): Html =>
  shell(
    c,
    html`<input id="${idOf(c.form, c.name)}" name="${c.name}" type="${type}" value="${c.value ?? ''}" data-kind="${c.kind ?? 'text'}"
 data-empty="${c.empty ?? 'omit'}" aria-describedby="${described(c)}"${c.attributes ?? ''}>`,
  )

export const textarea = (c: Control, rows = 4): Html =>
  shell(
    c,
    html`<textarea id="${idOf(c.form, c.name)}" name="${c.name}" rows="${rows}" data-kind="${c.kind ?? 'text'}"
 data-empty="${c.empty ?? 'omit'}" aria-describedby="${described(c)}"${c.attributes ?? ''}>${c.value ?? ''}</textarea>`,
  )

export const select = (c: Control, options: { value: string; label: string }[]): Html =>
  shell(
    c,
    html`<select id="${idOf(c.form, c.name)}" name="${c.name}" data-kind="text" data-empty="${c.empty ?? 'omit'}"
 aria-describedby="${described(c)}">${options.map(
   (o) => html`<option value="${o.value}"${o.value === (c.value ?? '') ? html` selected` : ''}>${o.label}</option>`,
 )}</select>`,
  )

/** A checkbox sent as true or false. */
export function checkbox(c: Control & { checked: boolean }): Html {
  const id = idOf(c.form, c.name)
  return html`<div class="field check" data-field="${c.name}">
<input id="${id}" name="${c.name}" type="checkbox" data-kind="flag"${c.checked ? html` checked` : ''} aria-describedby="${id}-error">
<label for="${id}">${c.label}</label>
<p class="field-error" id="${id}-error" hidden></p>
</div>`
}

/** Checkboxes of one field, sent as the list of those checked. */
export function checkboxes(c: Control, choices: readonly string[], checked: readonly string[]): Html {
  const id = idOf(c.form, c.name)
  return html`<fieldset class="field" data-field="${c.name}" aria-describedby="${id}-error">
<legend>${c.label}</legend>
${choices.map(
  (choice, i) =>
    html`<span class="choice"><input id="${id}-${i}" name="${c.name}" type="checkbox" value="${choice}" data-kind="list"${
      checked.includes(choice) ? html` checked` : ''
    }><label for="${id}-${i}">${choice}</label></span>`,
)}
<p class="field-error" id="${id}-error" hidden></p>
</fieldset>`
}

/** A form studio.js sends to the API (`method`, `action`) as JSON or multipart, then does `after`. */
export interface FormSpec {
  id: string
  method: 'POST' | 'PATCH' | 'PUT' | 'DELETE'
  action: string
  /** reload: show the page again; go:PATH (`{id}` is the answer's id); show: keep the page, show what came back. */
  after: string
  encode?: 'json' | 'multipart'
  submit: string
  className?: string
}

export const form = (f: FormSpec, fields: Html): Html =>
  html`<form id="${f.id}" class="studio-form ${f.className ?? ''}" data-method="${f.method}" data-action="${f.action}"
 data-after="${f.after}" data-encode="${f.encode ?? 'json'}" novalidate>
${fields}
<p class="form-error" id="${f.id}-error" role="alert" hidden></p>
<div class="actions"><button type="submit" class="primary">${f.submit}</button><span class="form-status" role="status"></span></div>
<div class="result" id="${f.id}-result" hidden></div>
</form>`

/** A button that sends one request (a delete, a revoke, a test event), asking first when `confirm` is given. */
export const actionButton = (b: {
  label: string
  method: string
  action: string
  after: string
  confirm?: string
  name?: string
  /** The JSON body it sends, if any. */
  body?: unknown
}): Html =>
  html`<button type="button" class="action" data-method="${b.method}" data-action="${b.action}" data-after="${b.after}"${
    b.confirm ? html` data-confirm="${b.confirm}"` : ''
  }${b.body === undefined ? '' : html` data-body="${JSON.stringify(b.body)}"`}${
    b.name ? html` aria-label="${b.name}"` : ''
  }>${b.label}</button>`
