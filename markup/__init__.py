"""Text made into safe HTML for every app that shows it: Markdown (`markdown`), and
marks placed in a text by its offsets (`marks`). No Django and no app."""
