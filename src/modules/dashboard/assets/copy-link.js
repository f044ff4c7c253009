// A link shown once (an invitation): Copy puts it on the clipboard. Served as a file under the
// page's nonce; without it the address stays selectable in its field.
/* global document, navigator */
(function () {
  var box = document.getElementById('copy-box');
  var field = document.getElementById('invitation-link');
  var copy = document.getElementById('copy-link');
  var status = document.getElementById('copy-status');
  if (!box || !field || !copy || !status) return;
  var url = box.getAttribute('data-url');
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
})();
