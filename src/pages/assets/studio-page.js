// Trellis Studio's page behaviour (after studio.js, whose send and forms it starts): the studio's own sign-in and
// sign-out, files dropped on the forms, the live Markdown preview, and what a form's answer left to show after a reload.
'use strict'

/** A zone a file is dropped on puts it in the file control it stands for. */
function startDropZone(zone) {
  const control = byId(zone.dataset.dropFor)
  if (!control) return
  const named = () => {
    zone.textContent = control.files[0] ? `${control.files[0].name} (${Math.ceil(control.files[0].size / 1024)} KiB)` : zone.dataset.text
  }
  zone.dataset.text = zone.textContent
  zone.addEventListener('click', () => control.click())
  zone.addEventListener('dragover', (event) => {
    event.preventDefault()
    zone.classList.add('over')
  })
  zone.addEventListener('dragleave', () => zone.classList.remove('over'))
  zone.addEventListener('drop', (event) => {
    event.preventDefault()
    zone.classList.remove('over')
    if (!event.dataTransfer?.files.length) return
    control.files = event.dataTransfer.files
    control.dispatchEvent(new Event('change', { bubbles: true }))
  })
  control.addEventListener('change', named)
}

/** The Markdown written, shown as its page will show it (rendered and sanitized by the server), as it is typed. */
function startPreview(textarea) {
  const preview = byId('publish-preview')
  let timer = 0
  let asked = 0
  textarea.addEventListener('input', () => {
    clearTimeout(timer)
    timer = setTimeout(async () => {
      const mine = ++asked
      const answer = await fetch('/studio/preview', {
        method: 'POST',
        headers: { [CSRF_HEADER]: studioData().csrf, 'content-type': 'text/markdown; charset=utf-8' },
        body: textarea.value,
      })
      if (mine === asked && answer.ok) preview.innerHTML = await answer.text()
    }, 250)
  })
}

/** The value a form's answer gave before the page was made again (an access link, a webhook's secret). */
function showFlash() {
  const flash = JSON.parse(sessionStorage.getItem(FLASH) ?? 'null')
  sessionStorage.removeItem(FLASH)
  const box = flash && byId(`${flash.form}-result`)
  if (!box) return
  box.replaceChildren()
  box.hidden = false
  if (flash.warning) {
    const warning = Object.assign(document.createElement('p'), { className: 'notice price-warning', textContent: flash.warning })
    warning.setAttribute('role', 'status')
    box.append(warning)
  }
  if (!flash.key) return
  const label = flash.key === 'secret' ? 'Signing secret (shown this once: keep it now)' : 'Access link'
  const name = document.createElement('label')
  name.htmlFor = `${flash.form}-value`
  name.textContent = label
  const value = Object.assign(document.createElement('input'), { id: `${flash.form}-value`, readOnly: true, value: flash.value })
  const copy = Object.assign(document.createElement('button'), { type: 'button', textContent: 'Copy' })
  copy.addEventListener('click', async () => {
    await navigator.clipboard?.writeText(flash.value).catch(() => {})
    copy.textContent = 'Copied'
  })
  box.append(name, value, copy)
}

async function studioSignIn(button) {
  const status = byId('studio-status')
  button.disabled = true
  status.textContent = 'Sign the message in your wallet…'
  try {
    await window.trellis.openSession('/v1/auth/studio')
    location.reload()
  } catch (error) {
    status.textContent = `Not signed in: ${error?.message ?? error}`
    status.className = 'status bad'
    button.disabled = false
  }
}

document.addEventListener('DOMContentLoaded', () => {
  // The studio has its own sign-in: the reading session's button (trellis.js) would only confuse here.
  const readingSignIn = byId('sign-in')
  if (readingSignIn) readingSignIn.hidden = true
  byId('studio-sign-in')?.addEventListener('click', (event) => studioSignIn(event.currentTarget))
  byId('studio-sign-out')?.addEventListener('click', async () => {
    await fetch('/v1/auth/session', { method: 'DELETE' })
    location.assign('/studio')
  })
  for (const form of document.querySelectorAll('form.studio-form')) form.addEventListener('submit', (event) => submit(form, event))
  for (const button of document.querySelectorAll('button.action')) button.addEventListener('click', () => act(button))
  for (const zone of document.querySelectorAll('.drop[data-drop-for]')) startDropZone(zone)
  for (const textarea of document.querySelectorAll('textarea[data-kind="markdown"]')) startPreview(textarea)
  showFlash()
})
