"""The Live stage (``scene.StageScene``) and its parts: warehouse, desks, cheat sheet, seats, apprentice, legend."""
