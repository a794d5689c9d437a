// A file picker made of a visually hidden <input type="file"> and the zone that labels it: files
// come from the picker, from a drop on the zone, or from the keyboard (Enter or Space on the
// zone opens the picker). Shared by the sender page and the intake page.

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
  dropZone.addEventListener('dragleave', () => dropZone.classList.remove('dragging'));
  dropZone.addEventListener('drop', (event) => {
    event.preventDefault();
    dropZone.classList.remove('dragging');
    addFiles([...(event.dataTransfer?.files ?? [])]);
  });
  dropZone.tabIndex = 0;
  dropZone.addEventListener('keydown', (event) => {
    if (event.key === 'Enter' || event.key === ' ') {
      event.preventDefault();
      input.click();
    }
  });
}
