"""Write examples/plate_tectonics.pdf, the sample PDF course document, with fpdf2 (a dev dependency).

Run ``.venv/bin/python tests/data/make_example_pdf.py`` to regenerate it (it lives here, not in
examples/, so that folder holds only course documents); the PDF is committed so a fresh
clone needs nothing extra. The text uses only Latin-1 characters (the PDF core fonts' range).
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from fpdf import FPDF

TITLE = "Plate Tectonics: How the Surface of the Earth Moves"

CHAPTERS: list[tuple[str, list[str]]] = [
    (
        "1. From continental drift to plate tectonics",
        [
            "In 1912 the German meteorologist Alfred Wegener proposed that the continents had once been "
            "joined in a single supercontinent, which he called Pangaea, and had since drifted apart. He "
            "pointed to the jigsaw fit of the coastlines of South America and Africa, to identical fossils "
            "such as the freshwater reptile Mesosaurus found on both sides of the Atlantic, to matching rock "
            "formations and mountain belts, and to traces of ancient glaciers in places that are now " "tropical.",
            "Most geologists rejected continental drift because Wegener could not explain what force moved "
            "the continents. The idea was revived in the 1960s, when surveys of the ocean floor revealed a "
            "global system of mid-ocean ridges, and when measurements of magnetism in seafloor rocks showed "
            "symmetrical stripes of normal and reversed polarity on either side of the ridges. Harry Hess "
            "and others explained these stripes by seafloor spreading: new crust forms at the ridges and "
            "moves away from them, recording the reversals of the Earth's magnetic field like a tape " "recorder.",
            "Plate tectonics, the theory that combined these observations, holds that the outer shell of the "
            "Earth is broken into about a dozen large plates and many smaller ones that move relative to " "each "
            "other by a few centimetres per year, roughly as fast as fingernails grow.",
        ],
    ),
    (
        "2. The layers of the Earth",
        [
            "The Earth can be divided by composition into crust, mantle and core. Oceanic crust is thin, "
            "about 7 kilometres, dense and made mainly of basalt. Continental crust is thicker, 30 to 70 "
            "kilometres, less dense and rich in granite-like rocks. Because it is less dense, continental "
            "crust is rarely destroyed, which is why the oldest continental rocks are around 4 billion years "
            "old while the oldest oceanic crust is less than 200 million years old.",
            "For plate tectonics the mechanical layers matter more. The lithosphere, made of the crust and "
            "the uppermost mantle, is rigid and forms the plates. Beneath it lies the asthenosphere, a " "hotter "
            "layer of the mantle that is solid but weak enough to flow slowly over geological time. The "
            "plates are the lithosphere moving over the asthenosphere.",
        ],
    ),
    (
        "3. Divergent boundaries",
        [
            "At divergent boundaries plates move apart. In the oceans this happens along mid-ocean ridges "
            "such as the Mid-Atlantic Ridge, where hot mantle rock rises, partly melts as the pressure on it "
            "falls, and erupts as basalt to form new oceanic crust. Iceland is a place where the " "Mid-Atlantic "
            "Ridge rises above sea level, so the process can be seen on land.",
            "When a divergent boundary forms inside a continent, it creates a rift valley. The East African "
            "Rift is an active example: if rifting continues, the eastern part of Africa may eventually "
            "separate and a new ocean basin may open, as the Red Sea has opened between Africa and Arabia.",
        ],
    ),
    (
        "4. Convergent boundaries",
        [
            "At convergent boundaries plates move towards each other. When oceanic lithosphere meets "
            "continental lithosphere, the denser oceanic plate sinks beneath the continent in a process "
            "called subduction. A deep ocean trench marks the place where it bends down, and as the sinking "
            "plate releases water into the hot mantle above it, the mantle melts and feeds a chain of "
            "volcanoes. The Andes of South America formed this way.",
            "When two oceanic plates converge, one subducts beneath the other and the volcanoes form an "
            "island arc, such as Japan or the Aleutian Islands. The Mariana Trench, the deepest point of the "
            "oceans at nearly 11 kilometres, lies at such a boundary. Subduction zones also produce the "
            "largest earthquakes, called megathrust earthquakes, such as the magnitude 9.1 Tohoku earthquake "
            "of 2011.",
            "When two continents collide, neither sinks easily because continental crust is buoyant. The "
            "crust instead crumples and thickens into high mountain ranges. The Himalayas and the Tibetan "
            "Plateau are still rising as the Indian plate pushes into the Eurasian plate, a collision that "
            "began about 50 million years ago.",
        ],
    ),
    (
        "5. Transform boundaries",
        [
            "At transform boundaries plates slide past each other horizontally, and crust is neither created "
            "nor destroyed. Most transform faults are short offsets between segments of mid-ocean ridges, "
            "but some cross continents. The San Andreas Fault in California is a transform boundary between "
            "the Pacific plate and the North American plate. Friction locks the fault for years; stress "
            "builds up and is released suddenly in earthquakes, such as the San Francisco earthquake of " "1906.",
        ],
    ),
    (
        "6. What drives the plates",
        [
            "The plates are part of the Earth's system for losing its internal heat, which comes from the "
            "decay of radioactive elements and from the heat left over from the planet's formation. Mantle "
            "convection, the slow circulation of hot rock rising and cooler rock sinking, was long thought "
            "to drag the plates along. Today most geophysicists think the main force is slab pull: the cold, "
            "dense edge of a subducting plate sinks into the mantle and pulls the rest of the plate behind "
            "it. Ridge push, the tendency of the elevated lithosphere at a ridge to slide away downhill, "
            "adds a smaller force. Plates attached to large subducting slabs, like the Pacific plate, move "
            "fastest.",
            "Hotspots such as Hawaii are a separate phenomenon. A plume of hot mantle rises beneath the "
            "middle of a plate, and as the plate moves over it a chain of volcanoes forms, getting older "
            "with distance from the hotspot. The ages of the Hawaiian-Emperor seamount chain record the "
            "direction and speed of the Pacific plate over the last 70 million years.",
        ],
    ),
    (
        "7. Evidence and measurement today",
        [
            "Plate motions are now measured directly. Satellite positioning (GPS) stations show, for "
            "example, that the Atlantic Ocean widens by about 2.5 centimetres per year. The distribution of "
            "earthquakes and volcanoes outlines the plate boundaries: about three quarters of the world's "
            "active volcanoes lie around the Pacific Ocean in the so-called Ring of Fire. Plate tectonics "
            "thus unifies the explanation of mountains, ocean basins, earthquakes, volcanoes and the "
            "distribution of fossils, and it is the central organising theory of modern geology.",
        ],
    ),
]


def build(path: Path) -> None:
    """Lay out the chapters on A4 pages with a title, headings and justified paragraphs."""
    pdf = FPDF(format="A4")
    pdf.set_title(TITLE)
    pdf.set_author("suture examples")
    pdf.set_creation_date(datetime(2026, 1, 1, tzinfo=UTC))  # a fixed PDF for a fixed script
    pdf.set_auto_page_break(auto=True, margin=20)
    pdf.set_margins(25, 25, 25)
    pdf.add_page()
    pdf.set_font("Helvetica", "B", 16)
    pdf.multi_cell(0, 9, TITLE, new_x="LMARGIN", new_y="NEXT")
    pdf.ln(4)
    for heading, paragraphs in CHAPTERS:
        pdf.set_font("Helvetica", "B", 13)
        pdf.multi_cell(0, 8, heading, new_x="LMARGIN", new_y="NEXT")
        pdf.set_font("Helvetica", "", 12)
        for paragraph in paragraphs:
            pdf.multi_cell(0, 7, paragraph, align="J", new_x="LMARGIN", new_y="NEXT")
            pdf.ln(3)
        pdf.ln(2)
    pdf.output(str(path))


if __name__ == "__main__":
    target = Path(__file__).parents[2] / "examples" / "plate_tectonics.pdf"
    build(target)
    print(f"wrote {target}")
