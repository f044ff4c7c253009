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

  // A form's answer is drawn at the form's address: the page's own address is the home page's, so
  // that a reload does not send the form again and a refresh reads the home page.
  const home = '/wallet' + window.location.search;
  if (window.location.pathname !== '/wallet' && window.history) window.history.replaceState(null, '', home);

  /** Whether the payer is typing in the pending list (a PIN): it is not redrawn under their fingers. */
  function typing() {
    return Array.from(document.querySelectorAll('#pending input:not([type=hidden])')).some(
      (input) => input.value !== '' || input === document.activeElement,
    );
  }
  let due = false;
  document.addEventListener('focusout', () => {
    if (due) window.setTimeout(() => void refreshPending(), 0);
  });

  /** The page drawn again by the server; only the pending list is replaced (a form being typed in elsewhere stays). */
  async function refreshPending() {
    due = typing();
    if (due) return;
    const response = await fetch(home, { credentials: 'same-origin' });
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
