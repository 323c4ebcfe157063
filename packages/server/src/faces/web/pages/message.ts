import { html, type Html } from '../html.js';

/** A page that only says something: not found, a bad request, or a failure. */
export function renderMessage(heading: string, message: string): Html {
  return html`<h1 id="page-title">${heading}</h1>
    <p class="lead">${message}</p>
    <p>
      <a href="/">Search the registry</a> · <a href="/stats">Statistics</a> ·
      <a href="/docs">API reference</a>
    </p>`;
}
