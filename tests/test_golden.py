"""scripts/golden.py compare: cell by cell, a column renamed since the recording before read under
its new name after (golden.RENAMED), a difference named with its place."""

from act_course.upkeep import golden


def write(folder, entry, name, text):
    (folder / entry).mkdir(parents=True, exist_ok=True)
    (folder / entry / name).write_text(text)


def test_compare_reads_renamed_columns_under_their_new_names(tmp_path, capsys):
    before, after = tmp_path / "before", tmp_path / "after"
    sweep = "golden_sweep_population_float64"
    write(before, sweep, "runs.csv", "run,mean_ponder,max_ponder,train_time_s\nr0,2.5,4,1.0\n")
    write(after, sweep, "runs.csv", "run,mean_ponder,max_N,train_time_s\nr0,2.5,4,9.0\n")
    write(before, sweep, "difficulty.csv", "run,difficulty,ponder\nr0,1,2.5\n")
    write(after, sweep, "difficulty.csv", "run,difficulty,ponder\nr0,1,2.5\n")
    write(before, "golden_pitfalls_gallery", "gallery.csv", "pitfall,ponder,rho\ncorrect,1.5,2.25\n")
    write(after, "golden_pitfalls_gallery", "gallery.csv", "pitfall,mean_N,rho\ncorrect,1.50001,2.25\n")
    write(before, "golden_ut_cap", "cap.csv", "entry,max_steps,ponder,ponder_d5\nremainder,3,2.0,2.5\n")
    write(after, "golden_ut_cap", "cap.csv", "entry,max_ponder,mean_N,mean_N_d5\nremainder,3,2.0,2.6\n")
    write(before, "golden_pondernet", "runs.csv", "model,steps_in,ponder_in\nact,1.5,2.5\npondernet,3.0,3.1\n")
    write(after, "golden_pondernet", "runs.csv",
          "model,steps_in,ponder_in,expected_steps_in\nact,1.5,2.5,\npondernet,3.0,,3.1\n")
    assert golden.compare(before, after) == 1
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("golden_pitfalls_gallery: within 0.0001 (largest 6.7e-06, gallery.csv row 0 ponder")
    assert lines[1:] == ["golden_pondernet: identical",
                         "golden_sweep_population_float64: identical",
                         "golden_ut_cap: DIFFERS: 0.0385 at cap.csv row 0 ponder_d5: 2.5 against mean_N_d5 2.6"]


def test_every_experiment_of_the_registry_is_recorded_at_its_smallest_settings_and_retired_entries_are_named(
        tmp_path, capsys):
    from act_experiments.experiments.registry import EXPERIMENTS
    commands = golden.commands()
    for name in EXPERIMENTS:
        args, folder, float64 = commands[f"golden_smallest_{name}"]
        assert args[:3] == ["-m", "act_experiments.experiments.registry", name] and folder.startswith("runs/golden/")
    before, after = tmp_path / "before", tmp_path / "after"
    write(before, "golden_pitfalls_gallery", "gallery.csv", "pitfall,mean_N\ncorrect,1.5\n")
    after.mkdir()
    assert golden.compare(before, after) == 0
    assert capsys.readouterr().out.startswith("golden_pitfalls_gallery: retired")
