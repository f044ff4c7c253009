// A new key's Copy button, shown once scripts run: the clipboard, else the key selected and
// copied. Served as a file under the page's nonce; without scripts the key stays selectable.
/* global document, navigator, window */
(function () {
  var field = document.getElementById('new-key');
  var copy = document.getElementById('copy-key');
  var status = document.getElementById('copy-status');
  if (!field || !copy || !status) return;
  copy.hidden = false;
  var copied = function () {
    status.textContent = copy.getAttribute('data-copied');
  };
  // Older browsers, and pages not served over https, have no clipboard API.
  var selectAndCopy = function () {
    var range = document.createRange();
    range.selectNodeContents(field);
    var selection = window.getSelection();
    selection.removeAllRanges();
    selection.addRange(range);
    try {
      if (document.execCommand('copy')) copied();
    } catch {
      // The key stays selected for the reader to copy.
    }
  };
  copy.addEventListener('click', function () {
    if (navigator.clipboard && navigator.clipboard.writeText)
      navigator.clipboard.writeText(field.textContent).then(copied, selectAndCopy);
    else selectAndCopy();
  });
})();
