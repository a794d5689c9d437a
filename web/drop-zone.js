// A file picker made of a visually hidden <input type="file"> and the zone that labels it: files
// come from the picker, from a drop on the zone, or from the keyboard. The input itself is the one
// Tab stop (screen readers announce it as the file button it is; the zone shows its focus,
// styles.css): Space opens the picker natively, Enter as the zone's text says.
// Shared by the sender page and the intake page.

/** Calls `addFiles` with the files chosen or dropped. */
export function acceptFiles(dropZone, input, addFiles) {
  input.addEventListener('change', () => {
    addFiles([...input.files]);
    input.value = ''; // choosing the same file again must fire change again
  });
  for (const type of ['dragenter', 'dragover']) {
    dropZone.addEventListener(type, (event) => {
      event.preventDefault();
      dropZone.classList.add('dragging');
    });
  }
  input.addEventListener('keydown', (event) => {
    if (event.key !== 'Enter') return;
    event.preventDefault(); // Enter would submit the form
    input.click();
  });
  dropZone.addEventListener('dragleave', () => dropZone.classList.remove('dragging'));
  dropZone.addEventListener('drop', (event) => {
    event.preventDefault();
    dropZone.classList.remove('dragging');
    addFiles([...(event.dataTransfer?.files ?? [])]);
  });
}
