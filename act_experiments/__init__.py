"""The experiment side of the course, shared by the NumPy and PyTorch backends.

``course``: what every notebook's setup and check cells use (the settings a learner or CI may
change from outside, and checks that record how far they are from failing).
"""
