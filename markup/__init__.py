"""Text made into safe HTML for every app that shows it: Markdown (`markdown`)."""
