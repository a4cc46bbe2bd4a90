"""The main window (``main_window.MainWindow``): the tour and the Live page in one window."""
