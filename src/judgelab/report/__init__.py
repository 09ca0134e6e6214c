"""Terminal tables, figures and the progress bar."""
