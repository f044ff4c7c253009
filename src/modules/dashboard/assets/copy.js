// Copy and Share, on every page that shows something to copy (views/copy.eta): a button with
// data-copy="<id>" copies the text of that element (an input's value), and says data-copied in
// its status region (role="status": read out by screen readers); a link with data-share opens the
// phone's own share sheet where the browser has one (the Web Share API), else stays WhatsApp's
// link. Served as a file under the page's nonce, loaded once by the layout (a page's
// `copies: true`); without it the text stays selectable and Share is a plain link.
/* global document, navigator, window */
(function () {
  var textOf = function (element) {
    return element.tagName === 'INPUT' || element.tagName === 'TEXTAREA' ? element.value : element.textContent.trim();
  };
  // Older browsers, and pages not served over https, have no clipboard API: select and copy.
  var selectAndCopy = function (element, done) {
    if (element.tagName === 'INPUT' || element.tagName === 'TEXTAREA') {
      element.focus();
      element.select();
    } else {
      var range = document.createRange();
      range.selectNodeContents(element);
      var selection = window.getSelection();
      selection.removeAllRanges();
      selection.addRange(range);
    }
    try {
      if (document.execCommand('copy')) done();
    } catch {
      // The text stays selected for the reader to copy.
    }
  };

  document.querySelectorAll('button[data-copy]').forEach(function (button) {
    var source = document.getElementById(button.getAttribute('data-copy'));
    var status = document.getElementById(button.getAttribute('data-copy') + '-status');
    if (!source || !status) return;
    button.hidden = false;
    var copied = function () {
      // Emptied first, so that a second Copy is announced again.
      status.textContent = '';
      window.setTimeout(function () {
        status.textContent = button.getAttribute('data-copied');
      }, 50);
    };
    button.addEventListener('click', function () {
      var text = textOf(source);
      if (navigator.clipboard && navigator.clipboard.writeText)
        navigator.clipboard.writeText(text).then(copied, function () {
          selectAndCopy(source, copied);
        });
      else selectAndCopy(source, copied);
    });
  });

  if (typeof navigator.share !== 'function') return;
  document.querySelectorAll('a[data-share]').forEach(function (share) {
    var title = share.getAttribute('data-share-title');
    var url = share.getAttribute('data-share-url');
    share.textContent = share.getAttribute('data-share');
    share.addEventListener('click', function (event) {
      event.preventDefault();
      navigator.share({ title: title, text: title, url: url }).catch(function (error) {
        // Closing the share sheet is a choice; anything else falls back to WhatsApp's link.
        if (error && error.name === 'AbortError') return;
        window.open(share.href, '_blank', 'noopener');
      });
    });
  });
})();
