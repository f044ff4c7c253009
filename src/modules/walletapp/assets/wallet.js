/*
 * The wallet app's page script: counts the pending requests' time down, and listens to the
 * wallet's event stream so a new request shows within a second, by drawing the page's list of
 * requests again from the server. The page works without it (a reload shows the same).
 */
/* global document, window, EventSource, DOMParser */
'use strict';
(() => {
  const page = JSON.parse(document.body.dataset.page || '{}');

  /** Seconds as the server writes a countdown: m:ss, or h:mm:ss from an hour. */
  function countdown(seconds) {
    const s = Math.max(0, Math.floor(seconds));
    const two = (n) => String(n).padStart(2, '0');
    const hours = Math.floor(s / 3600);
    const minutes = Math.floor((s % 3600) / 60);
    return hours > 0 ? `${hours}:${two(minutes)}:${two(s % 60)}` : `${minutes}:${two(s % 60)}`;
  }

  let started = Date.now();
  function tick() {
    const elapsed = (Date.now() - started) / 1000;
    for (const time of document.querySelectorAll('time.countdown')) {
      const left = Number(time.dataset.seconds) - elapsed;
      time.textContent = countdown(left);
      if (left <= 0) time.closest('.request')?.classList.add('ended');
    }
  }
  window.setInterval(tick, 1000);

  /** The page drawn again by the server; only the pending list is replaced (a form being typed in elsewhere stays). */
  async function refreshPending() {
    const response = await fetch(window.location.pathname + window.location.search, { credentials: 'same-origin' });
    if (!response.ok) return;
    const fresh = new DOMParser().parseFromString(await response.text(), 'text/html').getElementById('pending');
    const current = document.getElementById('pending');
    if (fresh && current) {
      current.replaceWith(document.importNode(fresh, true));
      started = Date.now();
      tick();
    }
  }

  if (page.events && typeof EventSource === 'function') {
    const source = new EventSource(page.events);
    source.addEventListener('request', () => void refreshPending());
  }
})();
