"""The pages a run writes, opened in a real headless browser (Chromium through
Selenium, :mod:`tests.browser`): the report shows every plot and the animation, the
3D scene replays its commands and moves, and neither logs an error."""

from __future__ import annotations

import time
import warnings

from pfaff.cli import main
from tests.browser import browser, changed, errors, screenshot, wait_for  # noqa: F401
from tests.where import MODELS

# every image of the page decoded (naturalWidth > 0 once loaded), by its alt text
IMAGES = """return Array.from(document.images).map(
  i => [i.alt, i.complete && i.naturalWidth > 0 ? i.naturalWidth : 0]);"""


def _run(args: list[str]) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert main(["run", *args]) == 0


def test_the_report_shows_its_plots_and_animation(browser, tmp_path):  # noqa: F811
    out = tmp_path / "slider-crank"
    _run(["slider-crank", "--out", str(out), "--set", "t_end=0.3"])
    pngs = sorted(p.name for p in out.glob("*.png"))
    assert (out / "animation.gif").is_file() and len(pngs) >= 3
    browser.get((out / "report.html").as_uri())
    wait_for(
        lambda: browser.execute_script("return document.readyState") == "complete", "the page"
    )
    images = wait_for(
        lambda: (im := browser.execute_script(IMAGES)) and all(w for _, w in im) and im,
        "every image decoded",
    )
    assert len(images) == len(pngs) + 1  # every plot and the animation
    assert ["animation"] == [alt for alt, _ in images if alt == "animation"]
    assert all(w >= 300 for _, w in images)  # drawn at a readable size
    text = browser.find_element("tag name", "body").text
    assert "slider-crank" in text and "max_constraint_violation" in text
    assert errors(browser) == []


def test_the_scene_replays_the_run_and_moves(browser, tmp_path):  # noqa: F811
    out = tmp_path / "four-bar"
    _run([str(MODELS / "four_bar.xml"), "--out", str(out), "--set", "t_end=1"])
    browser.get((out / "scene.html").as_uri())
    n = wait_for(lambda: browser.execute_script("return window.pfaffSceneCommands"), "the scene")
    assert n >= 3  # the scene's objects and the animation
    status = browser.find_element("id", "pfaff-status").text
    assert status == "", status  # "3D scene failed to load: ..." otherwise
    time.sleep(0.5)  # a first frame drawn
    first = screenshot(browser)
    moved = wait_for(
        lambda: changed(first, screenshot(browser)) > 200, "the linkage moving", timeout=10
    )
    assert moved
    assert errors(browser) == []


def _scene_shot(browser, page) -> object:  # noqa: F811
    browser.get(page.as_uri())
    wait_for(lambda: browser.execute_script("return window.pfaffSceneCommands"), "the scene")
    time.sleep(1.0)  # drawn (the box rests: every frame alike)
    return screenshot(browser)


def test_the_scene_of_a_contact_run_shows_its_forces(browser, tmp_path):  # noqa: F811
    """The same box at rest with and without its contact force drawn: the cone's pixels
    (under the see-through box) are what differ."""
    from pfaff.files.model import load_model
    from pfaff.report.scene3d import scene_html
    from pfaff.scenarios.model_file import run_system
    from pfaff.simulate import SimOptions

    system = load_model(MODELS / "contact" / "box_on_plane.xml", contact=True)
    sc = run_system(system, 0.2, SimOptions(dt=1e-3), "box").scene3d
    pages = []
    for name, arrows in (("with.html", sc["arrows"]), ("without.html", None)):
        pages.append(tmp_path / name)
        page = scene_html(None, ".", None, sc["t"], boxes=sc["boxes"], arrows=arrows)
        pages[-1].write_text(page)
    shown, bare = (_scene_shot(browser, p) for p in pages)
    assert changed(shown, bare) > 100
    assert errors(browser) == []
