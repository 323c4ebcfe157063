// @ts-check
// Progressive enhancement for the registry's pages. Every page works without it; with it, typing or
// changing a filter searches in place (the URL follows, so back and links work) and copy buttons appear.
// Plain browser JavaScript served as is: no framework, no build step, no third-party code.
(() => {
  'use strict';

  const SEARCH_DELAY_MS = 250;

  /** @param {HTMLButtonElement} button */
  function enableCopy(button) {
    const text = button.dataset.copy ?? '';
    button.hidden = false;
    button.addEventListener('click', () => {
      const done = () => {
        button.textContent = 'Copied';
        setTimeout(() => {
          button.textContent = 'Copy';
        }, 1500);
      };
      if (navigator.clipboard === undefined) return;
      navigator.clipboard.writeText(text).then(done, () => {
        button.textContent = 'Copy failed';
      });
    });
  }

  /** @param {HTMLFormElement} form */
  function searchUrl(form) {
    const params = new URLSearchParams();
    for (const [name, value] of new FormData(form)) {
      if (typeof value === 'string' && value.trim() !== '') params.set(name, value);
    }
    const query = params.toString();
    return query === '' ? '/' : `/?${query}`;
  }

  /** @param {HTMLFormElement} form */
  function enableLiveSearch(form) {
    const results = document.getElementById('results');
    if (results === null) return;
    /** @type {AbortController | undefined} */
    let inFlight;
    /** @type {ReturnType<typeof setTimeout> | undefined} */
    let timer;

    /** @param {string} url @param {'push' | 'replace' | 'none'} history */
    async function show(url, history) {
      inFlight?.abort();
      const controller = new AbortController();
      inFlight = controller;
      results?.setAttribute('aria-busy', 'true');
      try {
        const response = await fetch(url, { headers: { accept: 'text/html' }, signal: controller.signal });
        const page = new DOMParser().parseFromString(await response.text(), 'text/html');
        const fresh = page.getElementById('results');
        if (fresh === null || results === null) return;
        results.replaceChildren(...Array.from(fresh.childNodes, (node) => document.importNode(node, true)));
        document.title = page.title;
        if (history === 'push' && url !== location.pathname + location.search)
          window.history.pushState(null, '', url);
        if (history === 'replace') window.history.replaceState(null, '', url);
      } catch (error) {
        if (!(error instanceof DOMException && error.name === 'AbortError')) {
          // Fall back to a normal page load; the server renders the same results.
          location.assign(url);
        }
      } finally {
        if (inFlight === controller) results?.removeAttribute('aria-busy');
      }
    }

    form.addEventListener('input', (event) => {
      const target = /** @type {HTMLElement} */ (event.target);
      if (target instanceof HTMLSelectElement) return;
      clearTimeout(timer);
      timer = setTimeout(() => void show(searchUrl(form), 'push'), SEARCH_DELAY_MS);
    });
    form.addEventListener('change', (event) => {
      if (event.target instanceof HTMLSelectElement) void show(searchUrl(form), 'push');
    });
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      clearTimeout(timer);
      void show(searchUrl(form), 'push');
    });
    window.addEventListener('popstate', () => {
      const params = new URLSearchParams(location.search);
      for (const element of Array.from(form.elements)) {
        if (element instanceof HTMLInputElement || element instanceof HTMLSelectElement) {
          element.value = params.get(element.name) ?? '';
        }
      }
      void show(location.pathname + location.search, 'none');
    });
  }

  function start() {
    document.documentElement.classList.add('js');
    for (const button of document.querySelectorAll('button[data-copy]')) {
      if (button instanceof HTMLButtonElement) enableCopy(button);
    }
    // On a phone the filters fold away unless one is in use, so results show on the first screen.
    if (window.matchMedia('(max-width: 40rem)').matches) {
      for (const box of document.querySelectorAll('details[data-collapse-narrow]')) {
        if (box instanceof HTMLDetailsElement) box.open = false;
      }
    }
    const form = document.querySelector('form[data-live-search]');
    if (form instanceof HTMLFormElement) enableLiveSearch(form);
  }

  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', start);
  else start();
})();
