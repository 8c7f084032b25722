"""Write the retail database (``db.json``) from a fixed seed: ``python -m mantra_env.domains.retail.make_db``.

The data is generated, not hand-written: names, cities, product types and their options below are the raw
material, a seeded ``random.Random`` combines them. ``--check`` fails if the committed file differs from what
this script writes (a test runs the same comparison).
"""

from __future__ import annotations

import itertools
import json
import random
import sys
from pathlib import Path
from typing import Any

from mantra_env.domains.datafile import write_or_check

SEED = 20261123
USERS = 1000
ORDERS = 2000
PATH = Path(__file__).parent / "db.json"

FIRST_NAMES = """
Aaliyah Aarav Abigail Ahmed Aiko Alejandro Amara Amelia Ana Andrei Arjun Ava Beatriz Benjamin Bianca Camila
Carlos Chen Chloe Daniel Diego Dmitri Elena Eli Emma Ethan Fatima Finn Freya Gabriel Grace Hana Harper Hugo
Ibrahim Isabella Ivan James Jasmine Javier Julia Kai Kenji Layla Leo Liam Lucas Lucia Maya Mei Mia Mohamed
Naomi Noah Nora Olivia Omar Priya Rafael Ravi Rosa Samir Sara Sofia Sophia Tariq Theo Valentina Wei Yara Yusuf
Zoe""".split()  # noqa: SIM905 - a block of words reads better
LAST_NAMES = """
Adams Ahmed Ali Alvarez Anderson Brown Chen Clark Cohen Costa Davis Diaz Dubois Evans Fernandez Fischer Garcia
Gomez Gonzalez Gupta Hall Hernandez Hughes Ito Jackson Johansson Johnson Kim Kowalski Lee Lopez Martin
Martinez Moore Morales Muller Nakamura Nguyen Okafor Olsen Patel Perez Petrov Ramirez Rossi Santos Sato
Schmidt Silva Singh Smith Suzuki Taylor Thomas Wang Williams Wilson Wright Yamamoto Young Zhang""".split()  # noqa: SIM905 - a block of words reads better
CITIES = [  # city, state, first digits of the zip codes
    ("Seattle", "WA", "981"), ("Portland", "OR", "972"), ("San Francisco", "CA", "941"), ("Los Angeles", "CA", "900"),
    ("San Diego", "CA", "921"), ("Phoenix", "AZ", "850"), ("Denver", "CO", "802"), ("Austin", "TX", "787"),
    ("Houston", "TX", "770"), ("Dallas", "TX", "752"), ("Chicago", "IL", "606"), ("Minneapolis", "MN", "554"),
    ("Detroit", "MI", "482"), ("Columbus", "OH", "432"), ("Atlanta", "GA", "303"), ("Miami", "FL", "331"),
    ("Orlando", "FL", "328"), ("Charlotte", "NC", "282"), ("Nashville", "TN", "372"), ("Philadelphia", "PA", "191"),
    ("Pittsburgh", "PA", "152"), ("New York", "NY", "100"), ("Brooklyn", "NY", "112"), ("Boston", "MA", "021"),
    ("Baltimore", "MD", "212"), ("Washington", "DC", "200"), ("Salt Lake City", "UT", "841"), ("Boise", "ID", "837"),
    ("Las Vegas", "NV", "891"), ("Kansas City", "MO", "641"), ("Milwaukee", "WI", "532"), ("Raleigh", "NC", "276"),
]  # fmt: skip
STREETS = """
Maple Oak Pine Cedar Elm Willow Birch Walnut Chestnut Spruce Lake Hill River Park Sunset Highland Meadow
Forest Valley Ridge Church Main Mill Spring Washington Lincoln Jefferson Madison Franklin Harbor""".split()  # noqa: SIM905 - a block of words reads better
STREET_KINDS = ["Street", "Avenue", "Road", "Lane", "Drive", "Court", "Boulevard", "Place", "Way"]
CARD_BRANDS = ["visa", "mastercard", "amex", "discover"]

COLORS = ["black", "white", "navy", "red", "green", "grey", "blue", "beige"]
# name, options (each a list of values), price range in dollars
PRODUCTS: list[tuple[str, dict[str, list[str]], tuple[float, float]]] = [
    (
        "T-Shirt",
        {"color": COLORS[:6], "size": ["S", "M", "L", "XL", "XXL"], "material": ["cotton", "polyester"]},
        (12, 35),
    ),
    ("Hoodie", {"color": COLORS[:5], "size": ["S", "M", "L", "XL"], "style": ["pullover", "zip-up"]}, (35, 90)),
    (
        "Running Shoes",
        {"size": ["7", "8", "9", "10", "11", "12"], "color": ["black", "white", "blue"], "sole": ["rubber", "EVA"]},
        (60, 180),
    ),
    (
        "Hiking Boots",
        {"size": ["7", "8", "9", "10", "11", "12"], "material": ["leather", "synthetic"], "waterproof": ["yes", "no"]},
        (90, 260),
    ),
    (
        "Sneakers",
        {
            "size": ["6", "7", "8", "9", "10", "11"],
            "color": ["white", "black", "red"],
            "material": ["canvas", "leather"],
        },
        (45, 150),
    ),
    (
        "Jacket",
        {"size": ["S", "M", "L", "XL"], "color": ["black", "navy", "olive"], "material": ["down", "fleece", "nylon"]},
        (70, 320),
    ),
    (
        "Jeans",
        {"fit": ["slim", "regular", "relaxed"], "waist": ["28", "30", "32", "34", "36"], "color": ["indigo", "black"]},
        (40, 120),
    ),
    (
        "Backpack",
        {
            "color": ["black", "grey", "green", "navy"],
            "size": ["small", "medium", "large"],
            "material": ["nylon", "polyester", "leather"],
        },
        (30, 210),
    ),
    (
        "Luggage Set",
        {
            "piece count": ["2-piece", "3-piece", "4-piece"],
            "color": ["silver", "black", "red"],
            "material": ["hardshell", "softshell"],
        },
        (120, 520),
    ),
    (
        "Sunglasses",
        {
            "frame color": ["black", "tortoise", "gold"],
            "lens color": ["grey", "brown", "green"],
            "lens type": ["polarized", "non-polarized"],
        },
        (25, 240),
    ),
    (
        "Wristwatch",
        {"strap material": ["leather", "metal", "silicone"], "dial color": ["black", "white", "blue"]},
        (80, 900),
    ),
    (
        "Smart Watch",
        {"color": ["black", "silver", "gold"], "band": ["silicone", "leather", "metal"], "display": ["AMOLED", "LCD"]},
        (150, 480),
    ),
    (
        "Wireless Earbuds",
        {
            "color": ["black", "white", "blue"],
            "battery life": ["6 hours", "8 hours"],
            "water resistance": ["IPX4", "IPX7", "none"],
        },
        (40, 260),
    ),
    (
        "Headphones",
        {
            "type": ["over-ear", "on-ear", "in-ear"],
            "connectivity": ["wired", "wireless"],
            "color": ["black", "white", "red"],
        },
        (30, 420),
    ),
    (
        "Bluetooth Speaker",
        {
            "color": ["black", "blue", "red", "green"],
            "battery life": ["10 hours", "20 hours"],
            "water resistance": ["yes", "no"],
        },
        (35, 300),
    ),
    (
        "Laptop",
        {
            "screen size": ["13-inch", "15-inch", "16-inch"],
            "processor": ["i5", "i7", "i9"],
            "ram": ["8GB", "16GB", "32GB"],
            "storage": ["256GB SSD", "512GB SSD", "1TB SSD"],
        },
        (650, 2900),
    ),
    (
        "Tablet",
        {
            "screen size": ["8-inch", "10-inch", "12-inch"],
            "storage": ["64GB", "128GB", "256GB"],
            "color": ["silver", "black", "gold"],
        },
        (180, 1100),
    ),
    (
        "Smartphone",
        {
            "color": ["black", "silver", "blue"],
            "storage": ["128GB", "256GB", "512GB"],
            "screen size": ["6.1-inch", "6.7-inch"],
        },
        (400, 1300),
    ),
    (
        "E-Reader",
        {
            "screen size": ["6-inch", "7-inch", "8-inch"],
            "connectivity": ["Wi-Fi", "Wi-Fi + Cellular"],
            "storage": ["8GB", "32GB"],
        },
        (90, 340),
    ),
    (
        "Digital Camera",
        {"resolution": ["20MP", "24MP", "30MP"], "zoom": ["3x", "5x", "10x"], "storage": ["SD card", "CF card"]},
        (300, 2400),
    ),
    (
        "Action Camera",
        {"resolution": ["4K", "5K", "1080p"], "waterproof": ["yes", "no"], "color": ["black", "silver"]},
        (120, 520),
    ),
    (
        "Gaming Mouse",
        {"color": ["black", "white", "RGB"], "sensor": ["optical", "laser"], "connectivity": ["wired", "wireless"]},
        (25, 160),
    ),
    (
        "Mechanical Keyboard",
        {
            "switch type": ["linear", "tactile", "clicky"],
            "backlight": ["none", "white", "RGB"],
            "size": ["full size", "80%"],
        },
        (60, 240),
    ),
    (
        "Monitor",
        {
            "screen size": ["24-inch", "27-inch", "32-inch"],
            "resolution": ["1080p", "1440p", "4K"],
            "refresh rate": ["60Hz", "144Hz"],
        },
        (140, 900),
    ),
    (
        "Wireless Router",
        {
            "wifi standard": ["Wi-Fi 5", "Wi-Fi 6", "Wi-Fi 6E"],
            "bands": ["dual-band", "tri-band"],
            "color": ["black", "white"],
        },
        (60, 420),
    ),
    (
        "External Hard Drive",
        {
            "capacity": ["1TB", "2TB", "4TB", "5TB"],
            "interface": ["USB 3.0", "USB-C", "Thunderbolt"],
            "color": ["black", "silver"],
        },
        (50, 260),
    ),
    ("USB Flash Drive", {"capacity": ["32GB", "64GB", "128GB", "256GB"], "interface": ["USB-A", "USB-C"]}, (8, 60)),
    (
        "Portable Charger",
        {
            "capacity": ["5000mAh", "10000mAh", "20000mAh"],
            "output": ["18W", "30W", "65W"],
            "color": ["black", "white", "blue"],
        },
        (20, 110),
    ),
    (
        "Electric Toothbrush",
        {"color": ["white", "black", "pink"], "battery life": ["2 weeks", "4 weeks"], "brush heads": ["1", "3", "5"]},
        (25, 240),
    ),
    (
        "Hair Dryer",
        {"color": ["black", "white", "pink"], "wattage": ["1200W", "1800W", "2000W"], "type": ["ionic", "ceramic"]},
        (30, 420),
    ),
    (
        "Coffee Maker",
        {
            "capacity": ["4 cups", "8 cups", "12 cups"],
            "type": ["drip", "espresso", "french press"],
            "color": ["black", "stainless steel"],
        },
        (35, 650),
    ),
    (
        "Electric Kettle",
        {
            "capacity": ["1L", "1.5L", "1.7L"],
            "material": ["stainless steel", "glass", "plastic"],
            "color": ["black", "white", "silver"],
        },
        (20, 160),
    ),
    (
        "Blender",
        {"capacity": ["1L", "1.5L", "2L"], "wattage": ["500W", "1000W", "1500W"], "material": ["plastic", "glass"]},
        (35, 480),
    ),
    (
        "Air Purifier",
        {
            "room size": ["small", "medium", "large"],
            "filter type": ["HEPA", "carbon", "ionic"],
            "features": ["quiet mode", "smart sensors"],
        },
        (80, 720),
    ),
    (
        "Vacuum Cleaner",
        {
            "type": ["upright", "canister", "robotic"],
            "bagged/bagless": ["bagged", "bagless"],
            "features": ["cordless", "pet hair removal"],
        },
        (90, 850),
    ),
    (
        "Desk Lamp",
        {
            "color": ["black", "white", "silver"],
            "brightness": ["low", "medium", "high"],
            "power source": ["USB", "AC adapter", "battery"],
        },
        (18, 140),
    ),
    (
        "Office Chair",
        {
            "material": ["mesh", "leather", "fabric"],
            "color": ["black", "grey", "blue"],
            "armrest": ["fixed", "adjustable"],
        },
        (120, 780),
    ),
    (
        "Standing Desk",
        {
            "size": ["120 x 60 cm", "140 x 70 cm", "160 x 80 cm"],
            "material": ["laminate", "bamboo", "wood"],
            "color": ["black", "white", "oak"],
        },
        (220, 980),
    ),
    (
        "Bookshelf",
        {
            "material": ["wood", "metal", "glass"],
            "color": ["white", "black", "brown"],
            "height": ["3 ft", "5 ft", "6 ft"],
        },
        (60, 420),
    ),
    (
        "Water Bottle",
        {
            "capacity": ["500ml", "750ml", "1000ml"],
            "material": ["stainless steel", "plastic", "glass"],
            "color": ["black", "blue", "green", "red"],
        },
        (10, 48),
    ),
    (
        "Yoga Mat",
        {
            "thickness": ["4mm", "6mm", "8mm"],
            "material": ["PVC", "TPE", "natural rubber"],
            "color": ["purple", "blue", "green", "pink"],
        },
        (18, 120),
    ),
    (
        "Bicycle",
        {
            "frame size": ["small", "medium", "large"],
            "color": ["black", "red", "blue"],
            "type": ["road", "mountain", "hybrid"],
        },
        (300, 2200),
    ),
    (
        "Cycling Helmet",
        {"size": ["S", "M", "L"], "color": ["black", "white", "red", "blue"], "ventilation": ["low", "medium", "high"]},
        (35, 260),
    ),
    (
        "Tent",
        {
            "size": ["2-person", "4-person", "6-person"],
            "material": ["nylon", "polyester", "canvas"],
            "season": ["3-season", "4-season"],
        },
        (70, 640),
    ),
    (
        "Sleeping Bag",
        {"temperature rating": ["20F", "35F", "50F"], "insulation": ["down", "synthetic"], "size": ["regular", "long"]},
        (40, 380),
    ),
    (
        "Camping Stove",
        {"fuel type": ["propane", "butane", "wood"], "burners": ["1", "2"], "weight": ["light", "standard"]},
        (30, 220),
    ),
    (
        "Fleece Blanket",
        {
            "size": ["throw", "twin", "queen", "king"],
            "color": ["grey", "navy", "beige", "red"],
            "pattern": ["solid", "plaid"],
        },
        (20, 95),
    ),
    (
        "Pet Bed",
        {
            "size": ["small", "medium", "large"],
            "material": ["memory foam", "polyester fill"],
            "color": ["grey", "brown", "blue"],
        },
        (25, 180),
    ),
    (
        "Garden Hose",
        {
            "length": ["25 ft", "50 ft", "100 ft"],
            "material": ["rubber", "vinyl", "latex"],
            "color": ["green", "black", "blue"],
        },
        (18, 120),
    ),
    (
        "Cookware Set",
        {"pieces": ["5-piece", "10-piece", "12-piece"], "material": ["stainless steel", "non-stick", "cast iron"]},
        (70, 640),
    ),
    (
        "Jigsaw Puzzle",
        {
            "pieces": ["500", "1000", "1500", "2000"],
            "theme": ["landscape", "animals", "art", "fantasy"],
            "difficulty": ["beginner", "intermediate", "expert"],
        },
        (12, 55),
    ),
    (
        "Board Game",
        {
            "players": ["2", "2-4", "2-6"],
            "duration": ["30 minutes", "60 minutes", "120 minutes"],
            "theme": ["strategy", "party", "family"],
        },
        (18, 95),
    ),
    (
        "Perfume",
        {
            "scent family": ["floral", "woody", "fresh", "oriental"],
            "size": ["30ml", "50ml", "100ml"],
            "gender": ["women", "men", "unisex"],
        },
        (40, 320),
    ),
    (
        "Skateboard",
        {
            "deck material": ["maple", "bamboo", "plastic"],
            "length": ["28 inch", "31 inch", "34 inch"],
            "design": ["plain", "graphic", "custom"],
        },
        (40, 220),
    ),
]
MAX_VARIANTS = 14
# Every record is written whole (optional fields too), so the file is exactly what the database models dump.
ORDER_DEFAULTS: dict[str, Any] = {
    "cancel_reason": None, "return_items": [], "return_payment_method_id": None, "exchange_items": [],
    "exchange_new_items": [], "exchange_payment_method_id": None, "exchange_price_difference": None,
}  # fmt: skip
ORDER_STATES = [  # status, weight
    ("pending", 26), ("pending_item_modified", 4), ("processed", 16), ("delivered", 36), ("cancelled", 8),
    ("return_requested", 5), ("exchange_requested", 5),
]  # fmt: skip


def _digits(rng: random.Random, count: int, used: set[str]) -> str:
    while True:
        value = str(rng.randrange(10 ** (count - 1), 10**count))
        if value not in used:
            used.add(value)
            return value


def _products(rng: random.Random, used: set[str]) -> dict[str, Any]:
    products = {}
    for name, options, (low, high) in PRODUCTS:
        product_id = _digits(rng, 10, used)
        combos = list(itertools.product(*options.values()))
        rng.shuffle(combos)
        variants = {}
        for combo in combos[: rng.randint(min(4, len(combos)), min(MAX_VARIANTS, len(combos)))]:
            item_id = _digits(rng, 10, used)
            variants[item_id] = {
                "item_id": item_id,
                "options": dict(zip(options, combo, strict=True)),
                "available": rng.random() < 0.75,
                "price": round(rng.uniform(low, high), 2),
            }
        products[product_id] = {"product_id": product_id, "name": name, "variants": variants}
    return products


def _address(rng: random.Random) -> dict[str, str]:
    city, state, prefix = rng.choice(CITIES)
    return {
        "address1": f"{rng.randint(1, 9999)} {rng.choice(STREETS)} {rng.choice(STREET_KINDS)}",
        "address2": f"Suite {rng.randint(100, 999)}" if rng.random() < 0.35 else "",
        "city": city,
        "state": state,
        "country": "USA",
        "zip": f"{prefix}{rng.randint(0, 99):02d}",
    }


def _users(rng: random.Random, used: set[str]) -> dict[str, Any]:
    users: dict[str, Any] = {}
    identities: set[tuple[str, str, str]] = set()
    emails: set[str] = set()
    while len(users) < USERS:
        first, last, address = rng.choice(FIRST_NAMES), rng.choice(LAST_NAMES), _address(rng)
        email = f"{first}.{last}{rng.randint(1, 99)}@example.com".lower()
        if (first, last, address["zip"]) in identities or email in emails:
            continue  # a customer must be found by one email, or by name and zip code
        identities.add((first, last, address["zip"]))
        emails.add(email)
        user_id = f"{first}_{last}_{_digits(rng, 4, used)}".lower()
        methods: dict[str, Any] = {}
        for source in rng.sample(["credit_card", "paypal", "gift_card"], rng.randint(1, 3)):
            for _ in range(2 if source == "credit_card" and rng.random() < 0.2 else 1):
                method_id = f"{source}_{_digits(rng, 7, used)}"
                method: dict[str, Any] = {"id": method_id, "source": source, "brand": None, "last_four": None,
                                          "balance": None}  # fmt: skip
                if source == "credit_card":
                    method |= {"brand": rng.choice(CARD_BRANDS), "last_four": f"{rng.randint(0, 9999):04d}"}
                if source == "gift_card":
                    method["balance"] = float(rng.choice([0, 10, 25, 50, 75, 100, 150, 200, 250, 300]))
                methods[method_id] = method
        users[user_id] = {"user_id": user_id, "name": {"first_name": first, "last_name": last}, "email": email,
                          "address": address, "payment_methods": methods, "orders": []}  # fmt: skip
    return users


def _order(rng: random.Random, used: set[str], user: dict[str, Any], products: dict[str, Any]) -> dict[str, Any]:
    order_id = f"#W{_digits(rng, 7, used)}"
    items = []
    for product in rng.sample(list(products.values()), rng.choices([1, 2, 3, 4, 5], [30, 30, 20, 12, 8])[0]):
        variant = rng.choice(list(product["variants"].values()))
        items.append({"item_id": variant["item_id"], "product_id": product["product_id"], "name": product["name"],
                      "options": variant["options"], "price": variant["price"]})  # fmt: skip
    status = rng.choices([s for s, _ in ORDER_STATES], [w for _, w in ORDER_STATES])[0]
    method = rng.choice(sorted(user["payment_methods"]))
    total = round(sum(item["price"] for item in items), 2)
    order: dict[str, Any] = {
        "order_id": order_id, "user_id": user["user_id"],
        "address": user["address"] if rng.random() < 0.85 else _address(rng),
        "items": items, "fulfillments": [], "status": status,
        "payment_history": [{"transaction_type": "payment", "amount": total, "payment_method_id": method}],
        **ORDER_DEFAULTS,
    }  # fmt: skip
    if status in ("processed", "delivered", "return_requested", "exchange_requested"):
        order["fulfillments"] = [{"tracking_ids": [_digits(rng, 12, used)], "item_ids": [i["item_id"] for i in items]}]
    if status == "cancelled":
        order["cancel_reason"] = rng.choice(["no longer needed", "ordered by mistake"])
        order["payment_history"].append({"transaction_type": "refund", "amount": total, "payment_method_id": method})
    chosen = rng.sample(items, rng.randint(1, len(items)))
    if status == "return_requested":
        order["return_items"] = sorted(item["item_id"] for item in chosen)
        order["return_payment_method_id"] = method
    if status == "exchange_requested":
        new = [rng.choice(list(products[item["product_id"]]["variants"].values())) for item in chosen]
        order["exchange_items"] = [item["item_id"] for item in chosen]
        order["exchange_new_items"] = [variant["item_id"] for variant in new]
        order["exchange_payment_method_id"] = method
        difference = sum(v["price"] for v in new) - sum(item["price"] for item in chosen)
        order["exchange_price_difference"] = round(difference, 2)
    return order


def build(seed: int = SEED) -> dict[str, Any]:
    """The whole database as JSON data."""
    rng = random.Random(seed)
    used: set[str] = set()
    products = _products(rng, used)
    users = _users(rng, used)
    user_ids = list(users)
    orders = {}
    for _ in range(ORDERS):
        user = users[rng.choice(user_ids)]
        order = _order(rng, used, user, products)
        orders[order["order_id"]] = order
        user["orders"].append(order["order_id"])
    return {"users": users, "orders": orders, "products": products}


def render(seed: int = SEED) -> str:
    return json.dumps(build(seed), indent=1, ensure_ascii=False) + "\n"


def main(argv: list[str] | None = None) -> int:
    return write_or_check(argv, "python -m mantra_env.domains.retail.make_db", __doc__, PATH, render)


if __name__ == "__main__":
    sys.exit(main())
