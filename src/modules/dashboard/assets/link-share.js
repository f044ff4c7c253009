// A payment link's page: Copy puts the link's address on the clipboard, and Share opens the
// phone's own share sheet where the browser has one (the Web Share API). Served as a file under
// the page's nonce; without it the address stays selectable and Share is WhatsApp's own link.
/* global document, navigator, window */
(function () {
  var box = document.getElementById('link-share');
  if (!box) return;
  var url = box.getAttribute('data-url');
  var title = box.getAttribute('data-title');
  var field = document.getElementById('link-url');
  var copy = document.getElementById('copy-link');
  var status = document.getElementById('copy-status');
  if (copy && field && status) {
    copy.hidden = false;
    var copied = function () {
      status.textContent = copy.getAttribute('data-copied');
    };
    // Older browsers, and pages not served over https, have no clipboard API: select and copy.
    var selectAndCopy = function () {
      field.focus();
      field.select();
      try {
        if (document.execCommand('copy')) copied();
      } catch {
        // The address stays selected for the reader to copy.
      }
    };
    copy.addEventListener('click', function () {
      if (navigator.clipboard && navigator.clipboard.writeText)
        navigator.clipboard.writeText(url).then(copied, selectAndCopy);
      else selectAndCopy();
    });
  }
  var share = document.getElementById('share-link');
  if (share && typeof navigator.share === 'function') {
    share.textContent = share.getAttribute('data-share');
    share.addEventListener('click', function (event) {
      event.preventDefault();
      navigator.share({ title: title, text: title, url: url }).catch(function (error) {
        // Closing the share sheet is a choice; anything else falls back to WhatsApp's link.
        if (error && error.name === 'AbortError') return;
        window.open(share.href, '_blank', 'noopener');
      });
    });
  }
})();
