// The product page's image upload: shows the chosen file before it is sent (a blob: URL the
// page's CSP allows). Served as a file under the page's nonce; the form works without it.
/* global document */
(function () {
  var input = document.getElementById('image-file');
  var figure = document.getElementById('image-preview');
  if (!input || !figure) return;
  var img = figure.querySelector('img');
  input.addEventListener('change', function () {
    if (img.src) URL.revokeObjectURL(img.src);
    var file = input.files && input.files[0];
    figure.hidden = !file;
    if (file) {
      img.src = URL.createObjectURL(file);
      img.alt = file.name;
    }
  });
})();
