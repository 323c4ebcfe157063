import { html, type Html } from '../html.js';

export function renderNotFound(message: string): Html {
  return html`<h1 id="page-title">Not found</h1>
    <p class="lead">${message}</p>
    <p>
      <a href="/">Search the registry</a> · <a href="/stats">Statistics</a> ·
      <a href="/docs">API reference</a>
    </p>`;
}
