// The demo catalog: a deterministic catalog file (the same bytes on every machine), loaded through
// the same import as `npm run catalog:import`. 60 categories on 3 levels, 2,000 products of which
// 200 are weight-based, valid EAN-13 barcodes, PLU codes, Russian and English texts, inventories
// in the 3 demo stores, each row located on the store's route with its temperature class.
// The same rows, streamed, make the large catalogs of `npm run catalog:generate` and the benchmark.
import type { Transaction } from 'kysely';
import { ean13 } from '../../domain/codes/barcode.js';
import type { CatalogFile, CategoryRow, InventoryRow, ProductRow } from '../catalog-import/file.js';
import { formatDecimal } from '../../domain/money/decimal.js';
import type { TemperatureClass } from '../../domain/picking/batching.js';
import { importCatalog, type CatalogImportSummary } from '../catalog-import/write.js';
import { publishCatalogVersion } from '../queries/catalog-snapshot.js';
import type { DB } from '../schema.js';
import { stableUuid } from './ids.js';
import { DEMO_STORES } from './stores.js';

/** A small deterministic PRNG (mulberry32): demo data must not depend on Math.random. */
function prng(seed: number) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    next,
    int: (min: number, max: number) => min + Math.floor(next() * (max - min + 1)),
    chance: (p: number) => next() < p,
    pick: <T>(xs: readonly T[]): T => xs[Math.floor(next() * xs.length)]!,
  };
}
type Rng = ReturnType<typeof prng>;

type Texts = readonly [ru: string, en: string];

interface Leaf {
  code: string;
  name: Texts;
  /** Product kinds of the leaf: base name and typical package sizes. */
  bases: readonly Texts[];
  variants: readonly Texts[];
  brands: readonly string[];
  /** Price range of one unit (rubles). */
  price: readonly [number, number];
  nutrition: readonly [kcal: number, protein: number, fats: number, carbs: number];
  weightBased?: boolean;
  fresh?: boolean;
  /** Also sold in packs of six (yogurts, eggs). */
  packs?: boolean;
  /** Kept otherwise than its department. */
  temperature?: TemperatureClass;
}

interface Branch {
  code: string;
  name: Texts;
  color: string;
  own?: boolean;
  mainPage?: { position: number; layout: string };
  /** How the department's goods are kept; ambient when absent. */
  temperature?: TemperatureClass;
  groups: { code: string; name: Texts; leaves: Leaf[] }[];
}

const ml = (ru: string, en: string): Texts => [ru, en];

const TREE: Branch[] = [
  {
    code: 'dairy',
    name: ['Молочные продукты и яйца', 'Dairy and eggs'],
    color: '#FFF4D6',
    mainPage: { position: 1, layout: 'carousel' },
    temperature: 'chilled',
    groups: [
      {
        code: 'dairy-milk',
        name: ['Молоко и сливки', 'Milk and cream'],
        leaves: [
          {
            code: 'milk',
            name: ['Молоко', 'Milk'],
            bases: [
              ml('Молоко пастеризованное', 'Pasteurised milk'),
              ml('Молоко ультрапастеризованное', 'UHT milk'),
              ml('Молоко топлёное', 'Baked milk'),
              ml('Молоко безлактозное', 'Lactose-free milk'),
            ],
            variants: [
              ml('1,5% 930 мл', '1.5% 930 ml'),
              ml('2,5% 1 л', '2.5% 1 l'),
              ml('3,2% 930 мл', '3.2% 930 ml'),
              ml('3,5% 1,4 л', '3.5% 1.4 l'),
              ml('6% 450 мл', '6% 450 ml'),
            ],
            brands: ['Простоквашино', 'Домик в деревне', 'Parmalat', 'Вкуснотеево', 'Valio'],
            price: [69, 149],
            nutrition: [58, 2.9, 3.2, 4.7],
            fresh: true,
          },
          {
            code: 'cream',
            name: ['Сливки', 'Cream'],
            bases: [
              ml('Сливки питьевые', 'Drinking cream'),
              ml('Сливки для взбивания', 'Whipping cream'),
              ml('Сливки кулинарные', 'Cooking cream'),
            ],
            variants: [ml('10% 200 мл', '10% 200 ml'), ml('20% 200 мл', '20% 200 ml'), ml('33% 500 мл', '33% 500 ml')],
            brands: ['Простоквашино', 'Parmalat', 'President', 'Экомилк'],
            price: [89, 329],
            nutrition: [206, 2.8, 20, 3.7],
          },
        ],
      },
      {
        code: 'dairy-fermented',
        name: ['Кисломолочные продукты', 'Fermented dairy'],
        leaves: [
          {
            code: 'kefir',
            name: ['Кефир', 'Kefir'],
            bases: [ml('Кефир', 'Kefir'), ml('Ряженка', 'Ryazhenka'), ml('Простокваша', 'Prostokvasha'), ml('Айран', 'Ayran')],
            variants: [ml('1% 900 мл', '1% 900 ml'), ml('2,5% 930 мл', '2.5% 930 ml'), ml('3,2% 450 мл', '3.2% 450 ml')],
            brands: ['Простоквашино', 'Домик в деревне', 'Био Баланс', 'Савушкин'],
            price: [59, 129],
            nutrition: [53, 2.9, 2.5, 4],
            fresh: true,
          },
          {
            code: 'yogurt',
            name: ['Йогурты', 'Yogurts'],
            bases: [
              ml('Йогурт питьевой', 'Drinking yogurt'),
              ml('Йогурт греческий', 'Greek yogurt'),
              ml('Йогурт классический', 'Classic yogurt'),
              ml('Йогурт клубничный', 'Strawberry yogurt'),
            ],
            variants: [ml('2% 270 г', '2% 270 g'), ml('3,5% 140 г', '3.5% 140 g'), ml('5% 120 г', '5% 120 g')],
            brands: ['Danone', 'Активиа', 'Epica', 'Чудо', 'Teos'],
            price: [39, 119],
            nutrition: [75, 4.5, 2.5, 9],
            fresh: true,
            packs: true,
          },
        ],
      },
      {
        code: 'dairy-cheese-eggs',
        name: ['Сыры и яйца', 'Cheese and eggs'],
        leaves: [
          {
            code: 'cheese',
            name: ['Сыры', 'Cheese'],
            bases: [
              ml('Сыр Российский', 'Rossiysky cheese'),
              ml('Сыр Гауда', 'Gouda cheese'),
              ml('Сыр Моцарелла', 'Mozzarella cheese'),
              ml('Сыр Пармезан', 'Parmesan cheese'),
              ml('Сыр творожный', 'Cream cheese'),
            ],
            variants: [ml('200 г', '200 g'), ml('250 г', '250 g'), ml('400 г', '400 g')],
            brands: ['Брест-Литовск', 'Hochland', 'Galbani', 'Ламбер', 'Viola'],
            price: [149, 699],
            nutrition: [356, 25, 27, 0],
          },
          {
            code: 'eggs',
            name: ['Яйца', 'Eggs'],
            bases: [
              ml('Яйца куриные С0', 'Chicken eggs C0'),
              ml('Яйца куриные С1', 'Chicken eggs C1'),
              ml('Яйца перепелиные', 'Quail eggs'),
            ],
            variants: [ml('10 шт', '10 pcs'), ml('6 шт', '6 pcs'), ml('20 шт', '20 pcs')],
            brands: ['Окское', 'Роскар', 'Синявинская', 'Село Зелёное'],
            price: [79, 249],
            nutrition: [157, 12.7, 11.5, 0.7],
            fresh: true,
            packs: true,
          },
        ],
      },
    ],
  },
  {
    code: 'produce',
    name: ['Овощи и фрукты', 'Fruit and vegetables'],
    color: '#E3F5D8',
    mainPage: { position: 2, layout: 'tiles' },
    groups: [
      {
        code: 'produce-fruit',
        name: ['Фрукты', 'Fruit'],
        leaves: [
          {
            code: 'apples',
            name: ['Яблоки и груши', 'Apples and pears'],
            bases: [
              ml('Яблоки Гала', 'Gala apples'),
              ml('Яблоки Голден', 'Golden apples'),
              ml('Яблоки Гренни Смит', 'Granny Smith apples'),
              ml('Груши Конференция', 'Conference pears'),
              ml('Груши Абате', 'Abate pears'),
            ],
            variants: [ml('весовые', 'loose'), ml('отборные', 'selected'), ml('фермерские', 'farm')],
            brands: ['Сады Придонья', 'Фрутмаркет', 'Агро'],
            price: [99, 299],
            nutrition: [47, 0.4, 0.4, 9.8],
            weightBased: true,
            fresh: true,
          },
          {
            code: 'citrus',
            name: ['Цитрусовые', 'Citrus'],
            bases: [
              ml('Апельсины', 'Oranges'),
              ml('Мандарины', 'Mandarins'),
              ml('Лимоны', 'Lemons'),
              ml('Грейпфрут', 'Grapefruit'),
              ml('Лайм', 'Lime'),
            ],
            variants: [ml('весовые', 'loose'), ml('крупные', 'large'), ml('сладкие', 'sweet')],
            brands: ['Фрутмаркет', 'Марокко Фреш', 'Агро'],
            price: [119, 399],
            nutrition: [43, 0.9, 0.2, 8.1],
            weightBased: true,
            fresh: true,
          },
        ],
      },
      {
        code: 'produce-veg',
        name: ['Овощи', 'Vegetables'],
        leaves: [
          {
            code: 'potatoes',
            name: ['Картофель и корнеплоды', 'Potatoes and root vegetables'],
            bases: [
              ml('Картофель', 'Potatoes'),
              ml('Морковь', 'Carrots'),
              ml('Свёкла', 'Beetroot'),
              ml('Лук репчатый', 'Onions'),
              ml('Редис', 'Radish'),
            ],
            variants: [ml('весовой', 'loose'), ml('молодой', 'new crop'), ml('мытый', 'washed')],
            brands: ['Овощной двор', 'Агро', 'Белая дача'],
            price: [29, 149],
            nutrition: [77, 2, 0.4, 16.3],
            weightBased: true,
            fresh: true,
          },
          {
            code: 'tomatoes',
            name: ['Томаты и огурцы', 'Tomatoes and cucumbers'],
            bases: [
              ml('Томаты черри', 'Cherry tomatoes'),
              ml('Томаты розовые', 'Pink tomatoes'),
              ml('Огурцы гладкие', 'Smooth cucumbers'),
              ml('Огурцы короткоплодные', 'Short cucumbers'),
              ml('Перец сладкий', 'Sweet pepper'),
            ],
            variants: [ml('весовые', 'loose'), ml('тепличные', 'greenhouse'), ml('грунтовые', 'field-grown')],
            brands: ['Белая дача', 'Овощной двор', 'Агро'],
            price: [149, 499],
            nutrition: [20, 1.1, 0.2, 3.7],
            weightBased: true,
            fresh: true,
          },
        ],
      },
      {
        code: 'produce-greens',
        name: ['Зелень и грибы', 'Herbs and mushrooms'],
        leaves: [
          {
            code: 'herbs',
            name: ['Зелень', 'Herbs'],
            bases: [
              ml('Укроп', 'Dill'),
              ml('Петрушка', 'Parsley'),
              ml('Базилик', 'Basil'),
              ml('Салат Айсберг', 'Iceberg lettuce'),
              ml('Шпинат', 'Spinach'),
            ],
            variants: [ml('50 г', '50 g'), ml('100 г', '100 g'), ml('пучок', 'bunch')],
            brands: ['Белая дача', 'Зелёная линия', 'Агро'],
            price: [49, 199],
            nutrition: [38, 2.5, 0.5, 6.3],
            fresh: true,
          },
          {
            code: 'mushrooms',
            name: ['Грибы', 'Mushrooms'],
            bases: [ml('Шампиньоны', 'Champignons'), ml('Вешенки', 'Oyster mushrooms'), ml('Шиитаке', 'Shiitake')],
            variants: [ml('250 г', '250 g'), ml('400 г', '400 g'), ml('резаные 300 г', 'sliced 300 g')],
            brands: ['Грибная радуга', 'Белая дача'],
            price: [99, 349],
            nutrition: [27, 4.3, 1, 0.1],
            fresh: true,
          },
        ],
      },
    ],
  },
  {
    code: 'meat-fish',
    name: ['Мясо и рыба', 'Meat and fish'],
    color: '#FBE0DC',
    mainPage: { position: 3, layout: 'tiles' },
    temperature: 'chilled',
    groups: [
      {
        code: 'meat',
        name: ['Мясо', 'Meat'],
        leaves: [
          {
            code: 'beef',
            name: ['Говядина', 'Beef'],
            bases: [
              ml('Говядина вырезка', 'Beef tenderloin'),
              ml('Говядина лопатка', 'Beef shoulder'),
              ml('Фарш говяжий', 'Minced beef'),
              ml('Стейк рибай', 'Ribeye steak'),
            ],
            variants: [ml('охлаждённая', 'chilled'), ml('мраморная', 'marbled'), ml('фермерская', 'farm')],
            brands: ['Мираторг', 'Праймбиф', 'Заречное'],
            price: [549, 2499],
            nutrition: [187, 18.9, 12.4, 0],
            weightBased: true,
          },
          {
            code: 'pork',
            name: ['Свинина', 'Pork'],
            bases: [ml('Свинина шейка', 'Pork neck'), ml('Свинина корейка', 'Pork loin'), ml('Фарш свиной', 'Minced pork')],
            variants: [ml('500 г', '500 g'), ml('800 г', '800 g'), ml('1 кг', '1 kg')],
            brands: ['Мираторг', 'Черкизово', 'Останкино'],
            price: [299, 899],
            nutrition: [259, 16, 21.6, 0],
          },
        ],
      },
      {
        code: 'poultry',
        name: ['Птица', 'Poultry'],
        leaves: [
          {
            code: 'chicken',
            name: ['Курица', 'Chicken'],
            bases: [
              ml('Филе куриное', 'Chicken fillet'),
              ml('Бедро куриное', 'Chicken thigh'),
              ml('Крылья куриные', 'Chicken wings'),
              ml('Цыплёнок целый', 'Whole chicken'),
            ],
            variants: [ml('охлаждённое 700 г', 'chilled 700 g'), ml('1 кг', '1 kg'), ml('500 г', '500 g')],
            brands: ['Петелинка', 'Приосколье', 'Мираторг'],
            price: [199, 599],
            nutrition: [113, 23.6, 1.9, 0.4],
            fresh: true,
          },
          {
            code: 'turkey',
            name: ['Индейка', 'Turkey'],
            bases: [ml('Филе индейки', 'Turkey fillet'), ml('Голень индейки', 'Turkey drumstick'), ml('Фарш из индейки', 'Minced turkey')],
            variants: [ml('500 г', '500 g'), ml('700 г', '700 g'), ml('1 кг', '1 kg')],
            brands: ['Индилайт', 'Пава-Пава', 'Дамате'],
            price: [299, 799],
            nutrition: [114, 23.7, 1.4, 0],
          },
        ],
      },
      {
        code: 'fish',
        name: ['Рыба и морепродукты', 'Fish and seafood'],
        leaves: [
          {
            code: 'fish-fresh',
            name: ['Рыба', 'Fish'],
            bases: [ml('Сёмга', 'Salmon'), ml('Форель', 'Trout'), ml('Треска', 'Cod'), ml('Дорадо', 'Dorado'), ml('Сибас', 'Sea bass')],
            variants: [ml('охлаждённая', 'chilled'), ml('стейк', 'steak'), ml('филе', 'fillet')],
            brands: ['Русское море', 'Балтийский берег', 'Норвежская'],
            price: [499, 1999],
            nutrition: [153, 20, 8.1, 0],
            weightBased: true,
            fresh: true,
          },
          {
            code: 'seafood',
            name: ['Морепродукты', 'Seafood'],
            bases: [ml('Креветки королевские', 'King prawns'), ml('Мидии', 'Mussels'), ml('Кальмар', 'Squid')],
            variants: [ml('500 г', '500 g'), ml('1 кг', '1 kg'), ml('варёно-мороженые 300 г', 'cooked frozen 300 g')],
            brands: ['Русское море', 'Agama', 'Меридиан'],
            price: [299, 1499],
            nutrition: [95, 18, 2.2, 0],
            temperature: 'frozen',
          },
        ],
      },
    ],
  },
  {
    code: 'bakery',
    name: ['Хлеб и выпечка', 'Bakery'],
    color: '#F3E3CF',
    own: true,
    mainPage: { position: 4, layout: 'carousel' },
    groups: [
      {
        code: 'bread',
        name: ['Хлеб', 'Bread'],
        leaves: [
          {
            code: 'bread-white',
            name: ['Белый хлеб', 'White bread'],
            bases: [
              ml('Батон нарезной', 'Sliced loaf'),
              ml('Багет французский', 'French baguette'),
              ml('Хлеб тостовый', 'Toast bread'),
              ml('Чиабатта', 'Ciabatta'),
            ],
            variants: [ml('300 г', '300 g'), ml('400 г', '400 g'), ml('из печи', 'fresh from the oven')],
            brands: ['Наша пекарня', 'Коломенский', "Harry's"],
            price: [39, 149],
            nutrition: [262, 7.5, 2.9, 50],
            fresh: true,
          },
          {
            code: 'bread-rye',
            name: ['Ржаной хлеб', 'Rye bread'],
            bases: [ml('Хлеб Бородинский', 'Borodinsky bread'), ml('Хлеб ржаной', 'Rye bread'), ml('Хлеб зерновой', 'Grain bread')],
            variants: [ml('350 г', '350 g'), ml('500 г', '500 g'), ml('нарезка', 'sliced')],
            brands: ['Наша пекарня', 'Коломенский', 'Черёмушки'],
            price: [49, 139],
            nutrition: [208, 6.8, 1.2, 39.8],
            fresh: true,
          },
        ],
      },
      {
        code: 'pastry',
        name: ['Выпечка', 'Pastry'],
        leaves: [
          {
            code: 'buns',
            name: ['Булочки', 'Buns'],
            bases: [
              ml('Круассан', 'Croissant'),
              ml('Булочка с маком', 'Poppy seed bun'),
              ml('Синнабон', 'Cinnamon roll'),
              ml('Слойка с вишней', 'Cherry puff'),
            ],
            variants: [ml('70 г', '70 g'), ml('100 г', '100 g'), ml('2 шт', '2 pcs')],
            brands: ['Наша пекарня', 'Хлебный дом'],
            price: [39, 159],
            nutrition: [406, 8.2, 21, 45],
            fresh: true,
          },
          {
            code: 'pies',
            name: ['Пироги', 'Pies'],
            bases: [
              ml('Пирог с капустой', 'Cabbage pie'),
              ml('Пирог с яблоком', 'Apple pie'),
              ml('Пирожок с картофелем', 'Potato pasty'),
              ml('Осетинский пирог', 'Ossetian pie'),
            ],
            variants: [ml('500 г', '500 g'), ml('1 кг', '1 kg'), ml('порционный', 'single')],
            brands: ['Наша пекарня', 'Хлебный дом'],
            price: [69, 699],
            nutrition: [240, 6, 9, 33],
            fresh: true,
          },
        ],
      },
      {
        code: 'confectionery',
        name: ['Кондитерские изделия', 'Confectionery'],
        leaves: [
          {
            code: 'cakes',
            name: ['Торты', 'Cakes'],
            bases: [
              ml('Торт Наполеон', 'Napoleon cake'),
              ml('Торт Медовик', 'Honey cake'),
              ml('Чизкейк', 'Cheesecake'),
              ml('Торт Прага', 'Prague cake'),
            ],
            variants: [ml('800 г', '800 g'), ml('1,2 кг', '1.2 kg'), ml('кусочек 120 г', 'slice 120 g')],
            brands: ['Наша пекарня', 'Mirel', 'Черёмушки'],
            price: [149, 1299],
            nutrition: [385, 5.5, 22, 42],
          },
          {
            code: 'cookies',
            name: ['Печенье', 'Cookies'],
            bases: [
              ml('Печенье овсяное', 'Oat cookies'),
              ml('Печенье сахарное', 'Sugar cookies'),
              ml('Крекер', 'Crackers'),
              ml('Пряники', 'Gingerbread'),
            ],
            variants: [ml('200 г', '200 g'), ml('300 г', '300 g'), ml('500 г', '500 g')],
            brands: ['Юбилейное', 'Lotus', 'Яшкино', 'Belvita'],
            price: [59, 299],
            nutrition: [437, 6.5, 15, 70],
          },
        ],
      },
    ],
  },
  {
    code: 'grocery',
    name: ['Бакалея', 'Grocery'],
    color: '#E8E4F7',
    mainPage: { position: 5, layout: 'single' },
    groups: [
      {
        code: 'grains-pasta',
        name: ['Крупы и макароны', 'Grains and pasta'],
        leaves: [
          {
            code: 'grains',
            name: ['Крупы', 'Grains'],
            bases: [
              ml('Гречка ядрица', 'Buckwheat'),
              ml('Рис басмати', 'Basmati rice'),
              ml('Овсяные хлопья', 'Rolled oats'),
              ml('Булгур', 'Bulgur'),
              ml('Киноа', 'Quinoa'),
            ],
            variants: [ml('800 г', '800 g'), ml('900 г', '900 g'), ml('в пакетиках 5×80 г', 'boil-in-bag 5×80 g')],
            brands: ['Мистраль', 'Увелка', 'Агро-Альянс', 'Националь'],
            price: [69, 299],
            nutrition: [313, 12.6, 3.3, 62],
          },
          {
            code: 'pasta',
            name: ['Макароны', 'Pasta'],
            bases: [ml('Спагетти', 'Spaghetti'), ml('Пенне', 'Penne'), ml('Фузилли', 'Fusilli'), ml('Лапша яичная', 'Egg noodles')],
            variants: [ml('450 г', '450 g'), ml('500 г', '500 g'), ml('1 кг', '1 kg')],
            brands: ['Barilla', 'Makfa', 'De Cecco', 'Шебекинские'],
            price: [59, 249],
            nutrition: [350, 12, 1.5, 71],
          },
        ],
      },
      {
        code: 'oil-sauces',
        name: ['Масло и соусы', 'Oil and sauces'],
        leaves: [
          {
            code: 'oil',
            name: ['Масло растительное', 'Cooking oil'],
            bases: [ml('Масло подсолнечное', 'Sunflower oil'), ml('Масло оливковое', 'Olive oil'), ml('Масло кукурузное', 'Corn oil')],
            variants: [ml('1 л', '1 l'), ml('500 мл', '500 ml'), ml('нерафинированное 1 л', 'unrefined 1 l')],
            brands: ['Золотая семечка', 'Borges', 'Олейна', 'Filippo Berio'],
            price: [119, 899],
            nutrition: [899, 0, 99.9, 0],
          },
          {
            code: 'sauces',
            name: ['Соусы', 'Sauces'],
            bases: [
              ml('Кетчуп томатный', 'Tomato ketchup'),
              ml('Майонез', 'Mayonnaise'),
              ml('Соус песто', 'Pesto sauce'),
              ml('Горчица', 'Mustard'),
            ],
            variants: [ml('350 г', '350 g'), ml('190 г', '190 g'), ml('800 г', '800 g')],
            brands: ['Heinz', 'Махеевъ', 'Calve', 'Слобода'],
            price: [59, 349],
            nutrition: [93, 1.8, 0.2, 21],
          },
        ],
      },
      {
        code: 'tea-coffee',
        name: ['Чай и кофе', 'Tea and coffee'],
        leaves: [
          {
            code: 'tea',
            name: ['Чай', 'Tea'],
            bases: [
              ml('Чай чёрный', 'Black tea'),
              ml('Чай зелёный', 'Green tea'),
              ml('Чай травяной', 'Herbal tea'),
              ml('Чай Эрл Грей', 'Earl Grey tea'),
            ],
            variants: [ml('25 пакетиков', '25 bags'), ml('100 пакетиков', '100 bags'), ml('листовой 200 г', 'loose leaf 200 g')],
            brands: ['Greenfield', 'Ahmad Tea', 'Lipton', 'Майский'],
            price: [89, 599],
            nutrition: [0, 0, 0, 0],
          },
          {
            code: 'coffee',
            name: ['Кофе', 'Coffee'],
            bases: [
              ml('Кофе в зёрнах', 'Coffee beans'),
              ml('Кофе молотый', 'Ground coffee'),
              ml('Кофе растворимый', 'Instant coffee'),
              ml('Кофе в капсулах', 'Coffee capsules'),
            ],
            variants: [ml('250 г', '250 g'), ml('1 кг', '1 kg'), ml('10 шт', '10 pcs')],
            brands: ['Lavazza', 'Jacobs', 'Illy', 'Жокей', 'Paulig'],
            price: [199, 2199],
            nutrition: [2, 0.1, 0, 0],
          },
        ],
      },
    ],
  },
  {
    code: 'kitchen',
    name: ['Кулинария', 'Ready meals'],
    color: '#FCE7C8',
    own: true,
    mainPage: { position: 6, layout: 'tiles' },
    temperature: 'chilled',
    groups: [
      {
        code: 'salads',
        name: ['Салаты', 'Salads'],
        leaves: [
          {
            code: 'salads-meat',
            name: ['Салаты с мясом', 'Meat salads'],
            bases: [
              ml('Салат Оливье', 'Olivier salad'),
              ml('Салат Цезарь с курицей', 'Chicken Caesar salad'),
              ml('Салат Мимоза', 'Mimosa salad'),
            ],
            variants: [ml('250 г', '250 g'), ml('500 г', '500 g'), ml('порция 180 г', 'portion 180 g')],
            brands: ['Наша кухня'],
            price: [149, 399],
            nutrition: [198, 5.5, 16.5, 7],
            fresh: true,
          },
          {
            code: 'salads-veg',
            name: ['Овощные салаты', 'Vegetable salads'],
            bases: [ml('Салат Греческий', 'Greek salad'), ml('Винегрет', 'Vinaigrette salad'), ml('Салат из свёклы', 'Beetroot salad')],
            variants: [ml('250 г', '250 g'), ml('500 г', '500 g'), ml('порция 180 г', 'portion 180 g')],
            brands: ['Наша кухня'],
            price: [119, 329],
            nutrition: [112, 2.1, 9, 6],
            fresh: true,
          },
        ],
      },
      {
        code: 'hot-dishes',
        name: ['Горячие блюда', 'Hot dishes'],
        leaves: [
          {
            code: 'soups',
            name: ['Супы', 'Soups'],
            bases: [
              ml('Борщ', 'Borscht'),
              ml('Суп куриный с лапшой', 'Chicken noodle soup'),
              ml('Солянка', 'Solyanka'),
              ml('Крем-суп грибной', 'Mushroom cream soup'),
            ],
            variants: [ml('350 г', '350 g'), ml('500 г', '500 g')],
            brands: ['Наша кухня'],
            price: [179, 349],
            nutrition: [54, 3, 2.4, 5],
            fresh: true,
          },
          {
            code: 'mains',
            name: ['Вторые блюда', 'Main courses'],
            bases: [
              ml('Котлеты по-киевски', 'Chicken Kiev'),
              ml('Плов с говядиной', 'Beef pilaf'),
              ml('Паста карбонара', 'Pasta carbonara'),
              ml('Голубцы', 'Cabbage rolls'),
            ],
            variants: [ml('300 г', '300 g'), ml('400 г', '400 g'), ml('с гарниром 350 г', 'with a side 350 g')],
            brands: ['Наша кухня'],
            price: [229, 549],
            nutrition: [180, 11, 9, 14],
            fresh: true,
          },
        ],
      },
      {
        code: 'breakfasts',
        name: ['Завтраки', 'Breakfasts'],
        leaves: [
          {
            code: 'pancakes',
            name: ['Блины и сырники', 'Pancakes'],
            bases: [ml('Блины с творогом', 'Pancakes with quark'), ml('Сырники', 'Syrniki'), ml('Оладьи', 'Fritters')],
            variants: [ml('4 шт', '4 pcs'), ml('300 г', '300 g'), ml('с ягодами', 'with berries')],
            brands: ['Наша кухня'],
            price: [129, 329],
            nutrition: [220, 9, 8.5, 27],
            fresh: true,
          },
          {
            code: 'porridge',
            name: ['Каши', 'Porridge'],
            bases: [
              ml('Каша овсяная', 'Oat porridge'),
              ml('Каша рисовая', 'Rice porridge'),
              ml('Каша пшённая с тыквой', 'Millet porridge with pumpkin'),
            ],
            variants: [ml('250 г', '250 g'), ml('350 г', '350 g')],
            brands: ['Наша кухня'],
            price: [99, 229],
            nutrition: [102, 3.2, 3, 15],
            fresh: true,
          },
        ],
      },
    ],
  },
];

/** Weight-based leaves and how many of the 2,000 demo products each holds (200 in all). */
const WEIGHT_LEAVES = ['apples', 'citrus', 'potatoes', 'tomatoes', 'beef', 'fish-fresh'];

const COUNTRIES: Texts[] = [
  ['Россия', 'Russia'],
  ['Беларусь', 'Belarus'],
  ['Турция', 'Turkey'],
  ['Италия', 'Italy'],
  ['Египет', 'Egypt'],
  ['Марокко', 'Morocco'],
  ['Аргентина', 'Argentina'],
  ['Сербия', 'Serbia'],
];
const MANUFACTURERS = ['Молочный комбинат № 1', 'Агрохолдинг «Заречье»', 'Фабрика «Северная»', 'Пищекомбинат «Восток»', 'Наша кухня'];

export const DEMO_UNITS = [
  { code: 'pc', kind: 'piece' as const, name: { ru: 'шт', en: 'pc' }, full_name: { ru: 'штука', en: 'piece' }, ratio: '1.000' },
  { code: 'kg', kind: 'weight' as const, name: { ru: 'кг', en: 'kg' }, full_name: { ru: 'килограмм', en: 'kilogram' }, ratio: '1.000' },
  {
    code: 'g100',
    kind: 'weight' as const,
    name: { ru: '100 г', en: '100 g' },
    full_name: { ru: '100 граммов', en: '100 grams' },
    ratio: '0.100',
  },
  {
    code: 'pack6',
    kind: 'piece' as const,
    name: { ru: 'уп. 6 шт', en: 'pack of 6' },
    full_name: { ru: 'упаковка 6 штук', en: 'pack of six' },
    ratio: '6.000',
  },
];

export const demoCategoryId = (code: string) => stableUuid(`category:${code}`);
export const demoProductId = (code: string) => stableUuid(`product:${code}`);
export const demoUnitCode = (code: (typeof DEMO_UNITS)[number]['code']) => code;

const CDN = 'https://cdn.grocery.example/catalog';

export function demoCategoryRows(): CategoryRow[] {
  const rows: CategoryRow[] = [];
  const image = (code: string) => ({
    original: `${CDN}/categories/${code}/original.png`,
    listing: `${CDN}/categories/${code}/listing.webp`,
  });
  for (const root of TREE) {
    rows.push({
      code: root.code,
      id: demoCategoryId(root.code),
      parent: null,
      name: { ru: root.name[0], en: root.name[1] },
      color: root.color,
      image: image(root.code),
      own_production: root.own ?? false,
      main_page: root.mainPage ?? null,
    });
    for (const group of root.groups) {
      // The counters of own production are shown for the groups, hidden on the root tile.
      rows.push({
        code: group.code,
        id: demoCategoryId(group.code),
        parent: root.code,
        name: { ru: group.name[0], en: group.name[1] },
        color: root.color,
        image: image(group.code),
        own_production: root.own ?? false,
        show_products_count: true,
      });
      for (const leaf of group.leaves) {
        rows.push({
          code: leaf.code,
          id: demoCategoryId(leaf.code),
          parent: group.code,
          name: { ru: leaf.name[0], en: leaf.name[1] },
          color: root.color,
          image: null,
          own_production: false,
        });
      }
    }
  }
  const root = rows.find((r) => r.code === 'kitchen')!;
  root.show_products_count = false;
  return rows;
}

const LATIN: Record<string, string> = {
  а: 'a',
  б: 'b',
  в: 'v',
  г: 'g',
  д: 'd',
  е: 'e',
  ё: 'e',
  ж: 'zh',
  з: 'z',
  и: 'i',
  й: 'y',
  к: 'k',
  л: 'l',
  м: 'm',
  н: 'n',
  о: 'o',
  п: 'p',
  р: 'r',
  с: 's',
  т: 't',
  у: 'u',
  ф: 'f',
  х: 'kh',
  ц: 'ts',
  ч: 'ch',
  ш: 'sh',
  щ: 'shch',
  ъ: '',
  ы: 'y',
  ь: '',
  э: 'e',
  ю: 'yu',
  я: 'ya',
};
/** A Russian brand as English texts write it ("Простоквашино" -> "Prostokvashino"). */
function latinBrand(brand: string): string {
  return [...brand]
    .map((ch) => {
      const lower = ch.toLowerCase();
      const latin = LATIN[lower];
      if (latin === undefined) return ch;
      return ch === lower ? latin : latin.charAt(0).toUpperCase() + latin.slice(1);
    })
    .join('')
    .replace(/[«»]/g, '"');
}

// ---- where the goods stand in each store ----

/** Shelves of a section, counted from the floor up. */
const SHELVES = 5;
/** The route takes the ambient goods first and the frozen ones last: cold goods wait least in the trolley. */
const ROUTE_CLASSES: readonly TemperatureClass[] = ['ambient', 'chilled', 'frozen'];

interface Place {
  aisle: string;
  section: string;
  temperature: TemperatureClass;
}

/**
 * Where each leaf stands in one demo store (by leaf code): an aisle per department and
 * temperature class (frozen seafood in a freezer aisle apart from the chilled meat and fish),
 * numbered in route order, and a section per leaf along it. The stores' floor plans differ in the
 * order of their departments within each class.
 */
function storeLayout(storeIndex: number): Map<string, Place> {
  const shift = (storeIndex * 2) % TREE.length;
  const departments = [...TREE.slice(shift), ...TREE.slice(0, shift)];
  const places = new Map<string, Place>();
  let aisle = 0;
  for (const temperature of ROUTE_CLASSES) {
    for (const root of departments) {
      const leaves = root.groups.flatMap((g) => g.leaves).filter((l) => (l.temperature ?? root.temperature ?? 'ambient') === temperature);
      if (!leaves.length) continue;
      aisle++;
      leaves.forEach((leaf, i) =>
        places.set(leaf.code, { aisle: String(aisle).padStart(2, '0'), section: String.fromCharCode(65 + i), temperature }),
      );
    }
  }
  return places;
}

const STORE_LAYOUTS = DEMO_STORES.map((_, s) => storeLayout(s));

/** The location fields of an inventory row: the leaf's place in the store, on the given shelf. */
function located(
  storeIndex: number,
  leaf: Leaf,
  shelf: number,
): Pick<InventoryRow, 'aisle' | 'section' | 'shelf' | 'sequence' | 'temperature_class'> {
  const place = STORE_LAYOUTS[storeIndex]!.get(leaf.code)!;
  return {
    aisle: place.aisle,
    section: place.section,
    shelf: String(shelf),
    sequence: `${place.aisle}-${place.section}-${shelf}`,
    temperature_class: place.temperature,
  };
}

const rublesText = (rubles: number) => formatDecimal(BigInt(Math.round(rubles * 100)), 2);
const kilos = (grams: number) => formatDecimal(BigInt(Math.round(grams)), 3);

function productRow(rng: Rng, leaf: Leaf, index: number, ordinal: number, leafCount: number): ProductRow {
  const code = `P${String(index + 1).padStart(6, '0')}`;
  const id = demoProductId(code);
  const base = leaf.bases[ordinal % leaf.bases.length];
  const variant = leaf.variants[Math.floor(ordinal / leaf.bases.length) % leaf.variants.length];
  const brand = leaf.brands[Math.floor(ordinal / (leaf.bases.length * leaf.variants.length)) % leaf.brands.length];
  // Beyond the distinct combinations a series number keeps names apart (the 50,000 catalog).
  const round = Math.floor(ordinal / (leaf.bases.length * leaf.variants.length * leaf.brands.length));
  const series = round > 0 ? ` №${round + 1}` : '';
  const seriesEn = round > 0 ? ` No. ${round + 1}` : '';
  const weightBased = leaf.weightBased ?? false;
  const [kcal, protein, fats, carbs] = leaf.nutrition;
  const vary = (v: number) => rublesText(Math.max(0, v * (0.85 + rng.next() * 0.3)));
  const basePrice = leaf.price[0] + rng.next() * (leaf.price[1] - leaf.price[0]);
  const country = rng.pick(COUNTRIES);
  const popularity = rng.int(0, 5000);
  const top = popularity > 4500 || rng.chance(0.03);
  // A leaf's products fill its section's shelves in turn, the same shelf in every store.
  const shelf = 1 + Math.floor((ordinal * SHELVES) / leafCount);
  const inventories: InventoryRow[] = [];
  DEMO_STORES.forEach((store, s) => {
    const place = located(s, leaf, shelf);
    // The flagship sells everything; the others about 90% and 80% of the range.
    if (s > 0 && !rng.chance(s === 1 ? 0.9 : 0.8)) return;
    const price = basePrice * (1 + (s - 1) * 0.03);
    const discounted = rng.chance(0.12);
    const oldPrice = discounted ? price / (1 - rng.int(10, 30) / 100) : null;
    const stockRoll = rng.next();
    const stock = stockRoll < 0.03 ? null : stockRoll < 0.1 ? 0 : weightBased ? rng.int(500, 40_000) : rng.int(1, 60);
    const limited = rng.chance(0.05);
    if (weightBased) {
      inventories.push({
        store: store.code,
        unit: 'kg',
        default: true,
        stock: stock === null ? null : kilos(stock),
        price: rublesText(price),
        old_price: oldPrice === null ? null : rublesText(oldPrice),
        order_limit: limited ? '3.000' : null,
        ...place,
      });
      if (ordinal % 4 === 0) {
        inventories.push({
          store: store.code,
          unit: 'g100',
          stock: stock === null ? null : kilos(stock * 10),
          price: rublesText(price / 10),
          old_price: oldPrice === null ? null : rublesText(oldPrice / 10),
          order_limit: null,
          ...place,
        });
      }
    } else {
      inventories.push({
        store: store.code,
        unit: 'pc',
        default: true,
        stock,
        price: rublesText(price),
        old_price: oldPrice === null ? null : rublesText(oldPrice),
        order_limit: limited ? 5 : null,
        ...place,
      });
      if (leaf.packs && stock !== null && stock >= 6) {
        inventories.push({
          store: store.code,
          unit: 'pack6',
          stock: Math.floor(stock / 6),
          price: rublesText(price * 6 * 0.95),
          old_price: null,
          order_limit: null,
          ...place,
        });
      }
    }
  });
  const hasImage = !rng.chance(0.05);
  return {
    code,
    id,
    category: leaf.code,
    name: { ru: `${base![0]} ${brand} ${variant![0]}${series}`, en: `${base![1]} ${latinBrand(brand!)} ${variant![1]}${seriesEn}` },
    description: rng.chance(0.85)
      ? {
          ru: `${base![0]} от «${brand}». Хранить при температуре от +2 до +6 °C.`,
          en: `${base![1]} by ${latinBrand(brand!)}. Keep at +2 to +6 °C.`,
        }
      : null,
    composition: rng.chance(0.7) ? { ru: `${leaf.name[0]}: 100%`, en: `${leaf.name[1]}: 100%` } : null,
    country: { ru: country[0], en: country[1] },
    manufacturer: rng.pick(MANUFACTURERS),
    brand,
    weight_based: weightBased,
    weight: weightBased ? kilos(rng.int(150, 1500)) : kilos(rng.int(50, 1500)),
    nutrition:
      kcal === 0 && protein === 0 ? null : { calories: vary(kcal), protein: vary(protein), fats: vary(fats), carbohydrates: vary(carbs) },
    // Loose goods are weighed and keyed in by PLU; packaged goods carry EAN-13 (Russian 460-469 prefixes).
    // First barcodes start 460-468, second ones 469, so the two series never collide.
    barcodes: weightBased
      ? []
      : [ean13(`46${index % 9}${String((index * 7919) % 1_000_000_000).padStart(9, '0')}`)].concat(
          rng.chance(0.1) ? [ean13(`469${String(index).padStart(9, '0')}`)] : [],
        ),
    // PLU codes have at most five digits: beyond the first 97,000 products (catalogs of a
    // million) loose goods are sold without one rather than two sharing it.
    plu:
      weightBased && index < 97_000
        ? String(3000 + index)
            .padStart(4, '0')
            .slice(-5)
        : null,
    image: hasImage
      ? {
          original: `${CDN}/products/${code}/original.jpg`,
          detail: `${CDN}/products/${code}/detail.webp`,
          listing: `${CDN}/products/${code}/listing.webp`,
          thumbnail: `${CDN}/products/${code}/thumbnail.webp`,
        }
      : null,
    top,
    new: rng.chance(0.06),
    fresh: (leaf.fresh ?? false) && rng.chance(0.5),
    popularity: top ? Math.max(popularity, 4000) : popularity,
    inventories,
  };
}

/**
 * The demo catalog's products, one at a time (a million of them fit in no array): `total` split
 * across the 36 leaves, a tenth of them weight-based (in the weight leaves), the rest evenly over
 * the other leaves, leaves interleaved so codes do not follow categories (as in a real article
 * register). The same rows in the same order on every run.
 */
export function* demoProductRows(total: number): Generator<ProductRow> {
  const rng = prng(20261122);
  const leaves = TREE.flatMap((r) => r.groups.flatMap((g) => g.leaves));
  const weightLeaves = leaves.filter((l) => WEIGHT_LEAVES.includes(l.code));
  const pieceLeaves = leaves.filter((l) => !WEIGHT_LEAVES.includes(l.code));
  const weightTotal = Math.round(total / 10);
  const share = (n: number, parts: number, i: number) => Math.floor(n / parts) + (i < n % parts ? 1 : 0);
  const plan: { leaf: Leaf; count: number }[] = [
    ...weightLeaves.map((leaf, i) => ({ leaf, count: share(weightTotal, weightLeaves.length, i) })),
    ...pieceLeaves.map((leaf, i) => ({ leaf, count: share(total - weightTotal, pieceLeaves.length, i) })),
  ];
  const cursors = plan.map(() => 0);
  for (let made = 0; made < total;) {
    for (const [i, p] of plan.entries()) {
      if (cursors[i]! < p.count) yield productRow(rng, p.leaf, made++, cursors[i]!++, p.count);
    }
  }
}

/** The demo catalog file (2,000 products unless told otherwise). */
export function demoCatalogFile(options: { products?: number } = {}): CatalogFile {
  return { units: DEMO_UNITS, categories: demoCategoryRows(), products: [...demoProductRows(options.products ?? 2000)] };
}

export async function seedCatalog(trx: Transaction<DB>): Promise<CatalogImportSummary> {
  return importCatalog(trx, demoCatalogFile());
}

/** Publishes the first catalog version, so the demo bootstraps at once (after content: banners and titles are part of it). */
export async function publishDemoCatalog(trx: Transaction<DB>, now: Date): Promise<void> {
  await publishCatalogVersion(trx, 24, now);
}
