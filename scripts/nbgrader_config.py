# nbgrader's settings for this course. `make course` copies this file into the course folder it
# builds (build/course/), and `make exercises` grades with it, so CI checks the settings a teacher
# uses. docs/teaching.md, section 4, gives the commands.
c = get_config()  # noqa: F821 (nbgrader provides it)

c.CourseDirectory.course_id = "act-course"

# Seconds per cell when nbgrader runs a notebook (autograde, or validate). nbgrader's default of
# 30 s is shorter than the live-training cells of notebooks 05-14: the longest (07's live run)
# took 48 s when `make exercises` graded 04-10 on two cores shared with other work, and takes a
# few times that when several learners' notebooks are graded on the same cores. 300 s is nbval's
# limit in `make test` and the book's.
c.Execute.timeout = 300

# A check cell that fails, or writes anything to stderr, scores 0: nbgrader's own rule. The check
# cells print what they checked on stdout only.
